import Foundation

/// A `207 Multi-Status` answer (RFC 4918, 13), written response by response so that a listing
/// of any length can go out in pieces (``take()``) instead of being held whole.
struct DAVMultistatus {
    private var pending: String

    init() {
        pending = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
            + "<D:multistatus xmlns:D=\"DAV:\" xmlns:C=\"\(DAVXML.cofferNamespace)\">"
    }

    /// A resource's properties: those found, with their values (XML, already escaped), in one
    /// `200` propstat; those it does not have in one `404` propstat. With `namesOnly`, the
    /// found ones are written empty (`propname`).
    mutating func add(href: String, found: [(name: QualifiedName, value: String)], missing: [QualifiedName] = [],
                      namesOnly: Bool = false) {
        pending += "<D:response><D:href>\(DAVXML.escaped(href))</D:href>"
        if !found.isEmpty {
            pending += "<D:propstat><D:prop>"
            for property in found { pending += Self.element(property.name, value: namesOnly ? "" : property.value) }
            pending += "</D:prop><D:status>\(Self.statusLine(200))</D:status></D:propstat>"
        }
        if !missing.isEmpty {
            pending += "<D:propstat><D:prop>"
            for name in missing { pending += Self.element(name, value: "") }
            pending += "</D:prop><D:status>\(Self.statusLine(404))</D:status></D:propstat>"
        }
        pending += "</D:response>"
    }

    /// A resource's properties, each with its own status (a `PROPPATCH`'s answer: all `200`,
    /// or the failed ones with their reason and the others `424 Failed Dependency`).
    mutating func add(href: String, statuses: [(name: QualifiedName, status: Int)]) {
        pending += "<D:response><D:href>\(DAVXML.escaped(href))</D:href>"
        for status in Set(statuses.map(\.status)).sorted() {
            pending += "<D:propstat><D:prop>"
            for property in statuses where property.status == status { pending += Self.element(property.name, value: "") }
            pending += "</D:prop><D:status>\(Self.statusLine(status))</D:status></D:propstat>"
        }
        pending += "</D:response>"
    }

    /// A resource with a status of its own (a member a `DELETE` or `COPY` could not handle).
    mutating func add(href: String, status: Int) {
        pending += "<D:response><D:href>\(DAVXML.escaped(href))</D:href><D:status>\(Self.statusLine(status))</D:status></D:response>"
    }

    /// How many bytes wait to be taken.
    var pendingBytes: Int { pending.utf8.count }

    /// What was written since the last take, as bytes to send.
    mutating func take() -> [UInt8] {
        defer { pending = "" }
        return Array(pending.utf8)
    }

    /// The end of the answer.
    mutating func finish() -> [UInt8] {
        pending += "</D:multistatus>\n"
        return take()
    }

    /// `<D:name>value</D:name>`, a foreign namespace declared on the element.
    static func element(_ name: QualifiedName, value: String) -> String {
        if name.namespace.isEmpty {
            // No namespace: no prefix may stand for it.
            return value.isEmpty ? "<\(name.name) xmlns=\"\"/>" : "<\(name.name) xmlns=\"\">\(value)</\(name.name)>"
        }
        let prefix = DAVXML.prefix(of: name.namespace), tag = prefix + ":" + name.name
        let declaration = prefix == "x" ? " xmlns:x=\"\(DAVXML.escaped(name.namespace))\"" : ""
        return value.isEmpty ? "<\(tag)\(declaration)/>" : "<\(tag)\(declaration)>\(value)</\(tag)>"
    }

    /// `HTTP/1.1 404 Not Found`.
    static func statusLine(_ status: Int) -> String {
        let reason = switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 409: "Conflict"
        case 412: "Precondition Failed"
        case 423: "Locked"
        case 424: "Failed Dependency"
        case 507: "Insufficient Storage"
        default: "Status"
        }
        return "HTTP/1.1 \(status) \(reason)"
    }
}
