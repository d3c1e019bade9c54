import CCofferXML
import CofferCore

/// S3's XML answers, read with libxml2: each element that holds only text, by its path.
enum S3XML {
    /// The `(path, text)` of every text element of `document`, in order; `nil` when it is not
    /// well-formed XML (or libxml2 is missing).
    static func texts(in document: [UInt8]) -> [(path: String, text: String)]? {
        final class Collected { var texts: [(path: String, text: String)] = [] }
        let collected = Collected()
        let result = document.withUnsafeBytes { raw in
            coffer_xml_texts(raw.baseAddress?.assumingMemoryBound(to: CChar.self), raw.count, { context, path, text in
                let collected = Unmanaged<Collected>.fromOpaque(context!).takeUnretainedValue()
                collected.texts.append((String(cString: path!), String(cString: text!)))
            }, Unmanaged.passUnretained(collected).toOpaque())
        }
        return withExtendedLifetime(collected) { result == 1 ? collected.texts : nil }
    }

    /// The text of the first element named `name` (at any depth).
    static func firstText(of name: String, in document: [UInt8]) -> String? {
        texts(in: document)?.first { $0.path == name || $0.path.hasSuffix("/" + name) }?.text
    }
}
