#if canImport(Glibc)
import Glibc
#endif

/// The Cache Directory Tagging Specification's `CACHEDIR.TAG`, which backup tools
/// (tar `--exclude-caches`, restic, borg) read to skip rebuildable folders.
public enum CacheDirectoryTag {
    public static let fileName = "CACHEDIR.TAG"
    /// The first line is fixed by the specification; the rest is a comment.
    public static let contents = """
        Signature: 8a477f597d28d172789f06886806bc55
        # This file marks a cache directory created by Coffer.
        # Its contents can be rebuilt; backup tools may skip it.
        # For information about cache directory tags see https://bford.info/cachedir/

        """

    /// Writes the tag into the folder at `hostPath` unless a valid one is there.
    public static func ensure(inFolderAt hostPath: String) throws {
        let path = hostPath + "/" + fileName
        if let existing = try? String(contentsOfFile: path, encoding: .utf8),
           existing.hasPrefix("Signature: 8a477f597d28d172789f06886806bc55") { return }
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
    }
}

import Foundation
