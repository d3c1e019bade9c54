public import Foundation

/// Files made to hurt a decoder, written by the tests that need them (never checked in).
public enum HostileFiles {
    /// A PDF of a few kilobytes whose page draws a form that draws the next form twice,
    /// `levels` deep: rendering it draws 2^levels rectangles (poppler takes hours at 23).
    public static func nestedFormsPDF(levels: Int = 28) -> Data {
        var objects: [String] = [
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources << /XObject << /F 5 0 R >> >> >>",
            stream("/F Do"),
        ]
        for level in 0..<levels {
            let number = 5 + level
            let last = level == levels - 1
            let resources = last ? "" : "/Resources << /XObject << /F \(number + 1) 0 R >> >> "
            let content = last ? "0 0 1 rg 0 0 200 200 re f" : "/F Do /F Do"
            objects.append(stream(content, dictionary: "/Type /XObject /Subtype /Form /BBox [0 0 200 200] \(resources)"))
        }
        var text = "%PDF-1.4\n"
        var offsets: [Int] = []
        for (index, object) in objects.enumerated() {
            offsets.append(text.utf8.count)
            text += "\(index + 1) 0 obj\n\(object)\nendobj\n"
        }
        let table = text.utf8.count
        text += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets { text += String(format: "%010d 00000 n \n", offset) }
        text += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(table)\n%%EOF\n"
        return Data(text.utf8)
    }

    private static func stream(_ content: String, dictionary: String = "") -> String {
        "<< \(dictionary)/Length \(content.utf8.count) >>\nstream\n\(content)\nendstream"
    }
}
