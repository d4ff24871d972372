/// Opening, entering and closing containers.
extension ValueWriter {
    /// Opens an array or map and returns its frame index and identity.
    func open(map isMap: Bool, sortUnit: Int) -> (index: Int, id: Int) {
        if frames.count >= ValueFormat.maxDepth { tooDeep() }
        tag(isMap ? .map : .array)
        nextID &+= 1
        frames.append(Frame(header: bytes.count, id: nextID, sortUnit: sortUnit, isMap: isMap))
        bytes.append(0)  // count placeholder, patched by close()
        return (frames.count - 1, nextID)
    }

    /// Makes the frame the innermost open one, closing any nested container
    /// that it left behind, and counts one more element.
    ///
    /// - Throws: `EncodingError.invalidValue` when the container was already
    ///   closed — a nested container written after its parent moved on.
    @inline(__always) func enter(_ index: Int, id: Int) throws {
        if index != frames.count - 1 || frames[index].id != id { try reopen(index, id: id) }
        if frames[index].sorted { frames[index].entryStarts.append(bytes.count) }
        frames[index].count += 1
    }

    private func reopen(_ index: Int, id: Int) throws {
        guard index < frames.count, frames[index].id == id else {
            throw EncodingError.invalidValue(
                id,
                .init(codingPath: path, debugDescription: "A container was written after its parent moved on; fill nested containers before their siblings")
            )
        }
        try close(downTo: index + 1)
    }

    /// Closes every frame at `index` and above, innermost first.
    func close(downTo index: Int) throws {
        if hasPendingError, let pendingError { throw pendingError }
        while frames.count > index {
            var frame = frames.removeLast()
            for (key, writer) in frame.deferred {
                if frame.sorted { frame.entryStarts.append(bytes.count) }
                if let key { rawString(key) }
                try writer.finish()
                bytes.append(contentsOf: writer.bytes.array)
            }
            if frame.sorted { sortEntries(of: frame) }
            patchCount(of: frame)
        }
    }

    /// Closes everything still open. Writes an empty map if nothing was written:
    /// a type whose `encode(to:)` encodes nothing is `{}`, as in JSON.
    func finish() throws {
        try close(downTo: 0)
        if bytes.isEmpty { bytes.append(ValueTag.map.rawValue); bytes.append(0) }
    }

    private func patchCount(of frame: Frame) {
        if frame.count < 0x80 {
            bytes[frame.header] = UInt8(frame.count)
            return
        }
        var encoded: [UInt8] = []
        var value = UInt64(frame.count)
        while value >= 0x80 {
            encoded.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        encoded.append(UInt8(value))
        bytes.replaceByte(at: frame.header, with: encoded)
    }

    /// Rewrites a dictionary's or set's units in the order of their keys'
    /// bytes: for a map entry the key's UTF-8, for a pair the encoded key, for
    /// a set element the encoded element.
    private func sortEntries(of frame: Frame) {
        let starts = frame.entryStarts
        let end = bytes.count
        guard starts.count > 1 else { return }
        // Ranges of sortable units: one entry of a map, two elements of a pair list.
        let step = frame.sortUnit
        var units: [(key: Range<Int>, whole: Range<Int>)] = []
        units.reserveCapacity(starts.count / step + 1)
        var i = 0
        while i < starts.count {
            let unitEnd = i + step < starts.count ? starts[i + step] : end
            let key = frame.isMap ? keyUTF8OfMapEntry(at: starts[i]) : starts[i]..<(i + 1 < starts.count ? starts[i + 1] : end)
            units.append((key, starts[i]..<unitEnd))
            i += step
        }
        let base = starts[0]
        let snapshot = bytes.copy(base..<end)
        units.sort { snapshot[($0.key.lowerBound - base)..<($0.key.upperBound - base)].lexicographicallyPrecedes(snapshot[($1.key.lowerBound - base)..<($1.key.upperBound - base)]) }
        var sorted: [UInt8] = []
        sorted.reserveCapacity(snapshot.count)
        for unit in units { sorted += snapshot[(unit.whole.lowerBound - base)..<(unit.whole.upperBound - base)] }
        bytes.overwrite(at: base, with: sorted)
    }

    /// The UTF-8 bytes of the key of the map entry at `start`.
    private func keyUTF8OfMapEntry(at start: Int) -> Range<Int> {
        var length = 0
        var shift = 0
        var position = start
        while true {
            let byte = bytes[position]
            position += 1
            length |= Int(byte & 0x7F) << shift
            if byte < 0x80 { break }
            shift += 7
        }
        return position..<(position + length)
    }
}
