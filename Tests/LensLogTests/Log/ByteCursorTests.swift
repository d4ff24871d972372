import Testing
@testable import LensLog

/// A cursor reads only inside its bounds, whatever bounds it is given:
/// its fields are copied through a buffer that does not check them.
@Suite struct ByteCursorTests {
    @Test func fieldsAreReadWithinTheBytesAndTheBoundsGiven() {
        let bytes: [UInt8] = [3, 10, 20, 30, 2, 40, 50]
        var whole = ByteCursor(bytes)
        #expect(whole.lengthPrefixed() == [10, 20, 30])
        #expect(whole.lengthPrefixed() == [40, 50])
        #expect(whole.isAtEnd && whole.lengthPrefixed() == nil)

        var cut = ByteCursor(bytes, to: 6)
        #expect(cut.lengthPrefixed() == [10, 20, 30])
        #expect(cut.lengthPrefixed() == nil, "the second field runs past the bound")

        var past = ByteCursor(bytes, from: 4, to: 100)
        #expect(past.remaining == 3)
        #expect(past.lengthPrefixed() == [40, 50])
        #expect(past.isAtEnd)

        var beyond = ByteCursor(bytes, from: 50, to: 100)
        #expect(beyond.isAtEnd && beyond.byte() == nil && beyond.lengthPrefixed() == nil)
        var before = ByteCursor(bytes, from: -5)
        #expect(before.byte() == 3)
    }
}
