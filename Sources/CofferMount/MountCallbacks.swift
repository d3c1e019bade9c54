import CCofferFUSE
import CofferCore
import Foundation

/// The table of C functions libfuse calls: each finds the ``MountFileSystem`` in its context and
/// hands it the call with Swift's types. A name that is not UTF-8 (Coffer's names are text) is
/// refused with `EINVAL` here.
enum MountCallbacks {
    static var table: coffer_fuse_ops {
        var ops = coffer_fuse_ops()
        ops.lookup = { context, request, parent, text in
            guard let request, let name = decoded(text, request) else { return }
            system(context).lookup(request, parent: parent, name: name)
        }
        ops.forget = { context, ino, count in system(context).table.forget(ino, count) }
        ops.getattr = { context, request, ino, fh in system(context).getattr(request!, ino: ino, fh: fh) }
        ops.setattr = { context, request, ino, attributes, toSet, fh in
            system(context).setattr(request!, ino: ino, attributes: attributes!, toSet: toSet, fh: fh)
        }
        ops.readlink = { context, request, ino in system(context).readlink(request!, ino: ino) }
        ops.symlink = { context, request, targetText, parent, text in
            guard let request, let target = decoded(targetText, request), let name = decoded(text, request) else { return }
            system(context).symlink(request, target: target, parent: parent, name: name)
        }
        ops.mkdir = { context, request, parent, text, _ in
            guard let request, let name = decoded(text, request) else { return }
            system(context).mkdir(request, parent: parent, name: name)
        }
        ops.unlink = { context, request, parent, text in
            guard let request, let name = decoded(text, request) else { return }
            system(context).remove(request, parent: parent, name: name, folder: false)
        }
        ops.rmdir = { context, request, parent, text in
            guard let request, let name = decoded(text, request) else { return }
            system(context).remove(request, parent: parent, name: name, folder: true)
        }
        ops.rename = { context, request, parent, text, newParent, newText, flags in
            guard let request, let name = decoded(text, request), let newName = decoded(newText, request) else { return }
            system(context).rename(request, parent: parent, name: name, newParent: newParent, newName: newName, flags: flags)
        }
        ops.open = { context, request, ino, flags in system(context).open(request!, ino: ino, flags: flags) }
        ops.read = { context, request, _, size, offset, fh in
            system(context).read(request!, size: size, offset: offset, fh: fh)
        }
        ops.write = { context, request, _, data, _, offset, fh in
            system(context).write(request!, data: data!, offset: offset, fh: fh)
        }
        ops.flush = { context, request, _, fh in system(context).flush(request!, fh: fh) }
        ops.release = { context, request, _, _, fh in
            system(context).release(fh)
            coffer_fuse_reply_err(request, 0)
        }
        ops.fsync = { context, request, _, dataOnly, fh in system(context).fsync(request!, dataOnly: dataOnly != 0, fh: fh) }
        ops.opendir = { context, request, ino, _ in system(context).opendir(request!, ino: ino) }
        ops.readdir = { context, request, ino, size, offset, fh in
            system(context).readdir(request!, ino: ino, size: size, offset: offset, fh: fh, plus: false)
        }
        ops.readdirplus = { context, request, ino, size, offset, fh in
            system(context).readdir(request!, ino: ino, size: size, offset: offset, fh: fh, plus: true)
        }
        ops.releasedir = { context, request, _, fh in
            system(context).close(fh)
            coffer_fuse_reply_err(request, 0)
        }
        ops.getxattr = { context, request, ino, text, size in
            guard let request, let name = decoded(text, request) else { return }
            system(context).getxattr(request, ino: ino, name: name, size: size)
        }
        ops.listxattr = { context, request, ino, size in system(context).listxattr(request!, ino: ino, size: size) }
        ops.setxattr = { context, request, ino, text, value, size, flags in
            guard let request, let name = decoded(text, request) else { return }
            system(context).setxattr(request, ino: ino, name: name, value: UnsafeRawBufferPointer(start: value, count: size), flags: flags)
        }
        ops.removexattr = { context, request, ino, text in
            guard let request, let name = decoded(text, request) else { return }
            system(context).removexattr(request, ino: ino, name: name)
        }
        ops.statfs = { context, request, ino in system(context).statfs(request!, ino: ino) }
        ops.create = { context, request, parent, text, _, flags in
            guard let request, let name = decoded(text, request) else { return }
            system(context).create(request, parent: parent, name: name, flags: flags)
        }
        ops.fallocate = { context, request, _, mode, offset, length, fh in
            system(context).fallocate(request!, mode: mode, offset: offset, length: length, fh: fh)
        }
        ops.lseek = { context, request, _, offset, whence, fh in
            system(context).lseek(request!, offset: offset, whence: whence, fh: fh)
        }
        return ops
    }
}

private func system(_ context: UnsafeMutableRawPointer?) -> MountFileSystem {
    Unmanaged<MountFileSystem>.fromOpaque(context!).takeUnretainedValue()
}

private func decoded(_ text: UnsafePointer<CChar>?, _ request: OpaquePointer?) -> String? {
    guard let text, let name = String(validatingCString: text) else {
        coffer_fuse_reply_err(request, EINVAL)
        return nil
    }
    return name
}
