import HashTreeCollections

/// A table's entries as the snapshot a store opened from holds them: keys
/// and values in two arrays, in key byte order.
///
/// Loading a table this way is appending to two arrays, where a hash map
/// would hash every key and allocate its nodes; reading one entry is a
/// binary search. A typed open decodes the entries in order, already
/// sorted by identifier. The first write to the table turns it into the
/// hash map (``StoreState/tables``) that writes change in place.
///
/// Immutable once built, so `Sendable`: versions of a store share it.
final class SnapshotEntries: Sendable {
    /// The keys, strictly ascending in byte order.
    let keys: [[UInt8]]
    /// `values[i]` is stored under `keys[i]`.
    let values: [[UInt8]]

    private init(keys: [[UInt8]], values: [[UInt8]]) {
        self.keys = keys
        self.values = values
    }

    var count: Int { keys.count }

    /// The value stored under `key`, if any. O(log n).
    func value(for key: [UInt8]) -> [UInt8]? {
        var low = 0, high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if precedes(keys[middle], key) { low = middle + 1 } else { high = middle }
        }
        return low < keys.count && keys[low] == key ? values[low] : nil
    }

    /// The entries as the hash map a table that changes is held in. O(n).
    var dictionary: TreeDictionary<[UInt8], StoredValue> {
        var entries: TreeDictionary<[UInt8], StoredValue> = [:]
        for (key, value) in zip(keys, values) { entries[key] = .encoded(value) }
        return entries
    }

    /// Collects one table's entries in the order a snapshot gives them.
    struct Builder {
        private var keys: [[UInt8]] = []
        private var values: [[UInt8]] = []
        /// Whether every key so far came after the one before it, as the
        /// snapshots LensDB writes give them.
        private var ascending = true

        mutating func append(key: consuming [UInt8], value: consuming [UInt8]) {
            if ascending, !keys.isEmpty, !precedes(keys[keys.count - 1], key) { ascending = false }
            keys.append(consume key)
            values.append(consume value)
        }

        /// The entries, in key order. A snapshot LensDB did not write may
        /// hold its entries in another order, or one key twice: the entries
        /// are then sorted, and the last value given for a key is its value,
        /// as it would be in a hash map filled in the same order.
        func build() -> SnapshotEntries {
            if ascending { return SnapshotEntries(keys: keys, values: values) }
            let order = keys.withUnsafeBufferPointer { keys in
                // Stable: of equal keys, the last given stays last.
                Array(keys.indices).sorted { precedes(keys[$0], keys[$1]) || (keys[$0] == keys[$1] && $0 < $1) }
            }
            var sortedKeys: [[UInt8]] = [], sortedValues: [[UInt8]] = []
            sortedKeys.reserveCapacity(order.count)
            sortedValues.reserveCapacity(order.count)
            for position in order {
                if let last = sortedKeys.last, last == keys[position] {
                    sortedValues[sortedValues.count - 1] = values[position]
                } else {
                    sortedKeys.append(keys[position])
                    sortedValues.append(values[position])
                }
            }
            return SnapshotEntries(keys: sortedKeys, values: sortedValues)
        }
    }
}
