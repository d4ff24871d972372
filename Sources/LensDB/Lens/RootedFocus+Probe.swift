extension RootedFocus {
    /// Learns the coding keys of this lens's key paths that no write has
    /// taught yet, so that a watched lens is filed where it belongs (see
    /// ``LensTrie``) before anything is written through it.
    ///
    /// It makes trial writes on a copy of the root in `state`, nothing of
    /// which reaches the store: the lens's default, its absent value, and
    /// the current value changed in one scalar (a flipped boolean, a number
    /// plus one, a string with one more character), decoded back as the
    /// type. Learning needs a parent value on the way; where none of the
    /// trials changes the encoding, the keys stay unknown until a write.
    /// - Complexity: two encodings of each parent on the way, once per key
    ///   path for the process's life.
    func learnKeys(in state: StoreState) {
        guard !knownKeys().complete else { return }
        let before = root.load(state) ?? root.default
        let current = read(before)
        let encoder = ValueEncoder()
        guard let currentBytes = try? encoder.encode(current) else { return }
        for trial in probes + [Self.perturbed(current)].compactMap({ $0 }) {
            guard let bytes = try? encoder.encode(trial), bytes != currentBytes else { continue }
            var after = before
            // A trial that throws (a missing parent) teaches nothing: the next one may.
            guard (try? update(&after, WriteTrace()) { $0 = trial }) != nil else { continue }
            // Learning that fails leaves the keys unknown, which is correct.
            _ = try? loggedMember(below: levels.count - 1, before: before, after: after)
            if knownKeys().complete { return }
        }
    }

    /// `value` with one scalar changed, if its type decodes such a value.
    static func perturbed(_ value: Value) -> Value? {
        guard let bytes = try? ValueEncoder().encode(value), let document = try? Document(decodingBinary: bytes) else { return nil }
        for candidate in perturbations(of: document) {
            // A candidate the type refuses (an enum's unknown raw value) is skipped.
            if let decoded = try? DocumentDecoder().decode(Value.self, from: candidate) { return decoded }
        }
        return nil
    }

    /// Documents that differ from `document` in one scalar.
    private static func perturbations(of document: Document) -> [Document] {
        switch document {
        case let .bool(flag): return [.bool(!flag)]
        case let .int(number): return [.int(number &+ 1)]
        case let .uint(number): return [.uint(number &+ 1)]
        case let .double(number): return [.double(number + 1)]
        case let .string(text): return [.string(text + "~")]
        case let .date(date): return [.date(date.addingTimeInterval(1))]
        case .null: return [.bool(false), .int(0), .string(""), .object([:]), .array([])]
        case let .object(entries):
            for key in entries.keys.sorted() {
                let changed = perturbations(of: entries[key]!).map { member -> Document in
                    var copy = document
                    copy[key] = member
                    return copy
                }
                if !changed.isEmpty { return changed }
            }
            return []
        case .bytes, .uuid, .array: return []
        }
    }
}
