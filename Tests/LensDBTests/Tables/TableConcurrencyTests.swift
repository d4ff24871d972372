import Foundation
import LensTestSupport
import Testing
@testable import LensDB

/// Promise 8 for tables: readers query while a writer commits, and each
/// query sees exactly one committed version, indexes included.
@Suite struct TableConcurrencyTests {
    struct Account: Entity, Equatable {
        var id: Int64
        var owner: String
        var balance: Int
    }

    @Test func queriesDuringCommitsEachSeeOneWholeVersion() throws {
        let store = try tableStore()
        let accounts = try store.table(Account.self, named: "accounts", indexes: [.on(\.balance), .on(\.owner)])
        try accounts.put((1...50).map { Account(id: $0, owner: $0 % 2 == 0 ? "even" : "odd", balance: 100) })
        let failures = Locked<[String]>([])
        runConcurrently(threads: 3) { thread in
            var random = SeededGenerator(seed: UInt64(thread))
            if thread == 0 {
                // Moves money between two accounts per transaction: the total never changes.
                for _ in 0..<300 {
                    let from = Int64.random(in: 1...50, using: &random), to = Int64.random(in: 1...50, using: &random)
                    let amount = Int.random(in: 1...20, using: &random)
                    do {
                        try store.write { tx in
                            guard var a = tx[accounts][from], var b = tx[accounts][to], from != to else { return }
                            a.balance -= amount
                            b.balance += amount
                            try tx[accounts].put([a, b])
                        }
                    } catch {
                        failures.withLock { $0.append("write: \(error)") }
                    }
                }
                return
            }
            for _ in 0..<300 {
                do {
                    let all = try accounts.query.all()
                    let total = all.reduce(0) { $0 + $1.balance }
                    if total != 5000 { failures.withLock { $0.append("a query saw a total of \(total)") } }
                    let threshold = Int.random(in: 50...150, using: &random)
                    let rich = try accounts.query.filter(\.balance >= threshold).sorted(by: \.balance, .descending).all()
                    if rich.contains(where: { $0.balance < threshold }) || !zip(rich, rich.dropFirst()).allSatisfy({ $0.balance >= $1.balance }) {
                        failures.withLock { $0.append("an index range returned a wrong or unordered entity") }
                    }
                    if all.count != 50 { failures.withLock { $0.append("a query saw \(all.count) accounts") } }
                } catch {
                    failures.withLock { $0.append("read: \(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(3) })")
        #expect(accounts.all().reduce(0) { $0 + $1.balance } == 5000)
    }
}
