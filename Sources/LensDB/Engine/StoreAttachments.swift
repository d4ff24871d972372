/// Objects the layers above the engine keep once per store (the lens
/// notifier), made on first use and released with the store.
///
/// An attachment must not keep its store alive: the store owns it, and a
/// reference back would keep the store from ever closing by itself.
final class StoreAttachments: Sendable {
    private let objects = Locked<[ObjectIdentifier: any AnyObject & Sendable]>([:])

    /// The store's attachment of type `T`, made by `make` the first time.
    func attachment<T: AnyObject & Sendable>(_ make: () -> T) -> T {
        objects.withLock { objects in
            if let existing = objects[ObjectIdentifier(T.self)] as? T { return existing }
            let made = make()
            objects[ObjectIdentifier(T.self)] = made
            return made
        }
    }
}
