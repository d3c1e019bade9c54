public import CofferCore
import Foundation

/// A capability added to a ``FileService`` by whoever puts the service together — its
/// favourites, share links, uploads, thumbnail cache… — rather than built into it.
///
/// The engine knows features only through this protocol and the observer protocols below
/// (``ItemMoveObserver``, ``FileUseObserver``); operations find the one they need with
/// ``FileService/feature(_:)``. A service without a feature answers the operations that
/// need it with `unsupported`.
///
/// A feature that has upkeep — a sweep, a trim, a watch — does it in
/// ``keepUp(_:)``, which runs while someone holds the service's background work
/// (``FileService/retainBackgroundWork()``, and every long-lived session).
public protocol ServiceFeature: AnyObject, Sendable {
    /// The feature's upkeep for `service`, run from the first hold of the service's
    /// background work until the last is let go, when its task is cancelled. It may return
    /// early when it leaves work running elsewhere (``stopKeepingUp()`` ends that).
    /// The default does nothing.
    func keepUp(_ service: FileService) async

    /// Called once ``keepUp(_:)`` has ended after the last hold was let go: stops work it
    /// left running. The default does nothing.
    func stopKeepingUp()
}

extension ServiceFeature {
    public func keepUp(_ service: FileService) async {}
    public func stopKeepingUp() {}
}

/// A feature told when the engine moved or renamed an item (favourites follow it).
public protocol ItemMoveObserver: ServiceFeature {
    /// `source` is now at `destination` (and what was below it, below it there). Best effort:
    /// it never fails the move.
    func itemMoved(from source: VirtualPath, to destination: VirtualPath, in service: FileService) async
}

/// A file a user used: opened, edited, imported, exported, downloaded or handed to an
/// application.
public enum FileUse: Sendable, Hashable {
    /// A file of a mount.
    case item(VirtualPath)
    /// A file of this computer, by its host path.
    case host(String)
}

/// A feature told when a user used a file (the desktop's recent files record it).
public protocol FileUseObserver: ServiceFeature {
    /// Best effort: it never fails the operation that used the file.
    func fileUsed(_ use: FileUse, in service: FileService) async
}

/// The features of one service, found by their type.
public struct ServiceFeatures: Sendable {
    private let byType: [ObjectIdentifier: any ServiceFeature]
    /// Every feature, in the order given.
    public let all: [any ServiceFeature]

    /// The features given; of two of the same type, the first is kept.
    public init(_ features: [any ServiceFeature]) {
        var byType: [ObjectIdentifier: any ServiceFeature] = [:]
        var all: [any ServiceFeature] = []
        for feature in features where byType[ObjectIdentifier(type(of: feature))] == nil {
            byType[ObjectIdentifier(type(of: feature))] = feature
            all.append(feature)
        }
        self.byType = byType
        self.all = all
    }

    /// The feature of type `type`, if the service has it.
    public subscript<Feature: ServiceFeature>(_ type: Feature.Type) -> Feature? {
        byType[ObjectIdentifier(type)] as? Feature
    }
}

extension FileService {
    /// The feature of type `type`, if the composition root registered it.
    public func feature<Feature: ServiceFeature>(_ type: Feature.Type) -> Feature? {
        features[type]
    }

    /// The feature of type `type`.
    /// - Throws: `unsupported` (detail `name`) for a service without it.
    @_spi(Engine) public func require<Feature: ServiceFeature>(_ type: Feature.Type, _ name: String) throws(CofferError) -> Feature {
        guard let feature = features[type] else { throw CofferError(.unsupported, detail: name) }
        return feature
    }

    /// Tells the features that watch for it that the engine moved `source` to `destination`.
    func noteMoved(from source: VirtualPath, to destination: VirtualPath) async {
        for case let observer as any ItemMoveObserver in features.all {
            await observer.itemMoved(from: source, to: destination, in: self)
        }
    }

    /// Tells the features that watch for it that a user used a file; best effort.
    @_spi(Engine) public func noteUse(_ use: FileUse) async {
        for case let observer as any FileUseObserver in features.all {
            await observer.fileUsed(use, in: self)
        }
    }
}
