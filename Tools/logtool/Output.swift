import Foundation
import LensDB

/// Prints a report as JSON.
func printJSON<T: Encodable>(_ value: T, pretty: Bool = true) throws {
    print(try inspectionJSON(value, pretty: pretty))
}
