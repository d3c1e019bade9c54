import CofferCore
@testable import CofferTransfers
import Testing

@Suite struct DownloadNameTests {
    @Test(arguments: [
        (#"attachment; filename="EURO rates"; filename*=utf-8''%e2%82%ac%20rates"#, "€ rates"),
        (#"attachment; filename*=UTF-8''foo-%c3%a4.html"#, "foo-ä.html"),
        (#"attachment; filename*=iso-8859-1''foo-%E4.html"#, "foo-ä.html"),
        (#"attachment; filename="foo-%41.html""#, "foo-%41.html"),  // `filename` is not percent-decoded
        (#"attachment; filename="f\"oo.html""#, #"f"oo.html"#),
        (#"attachment; filename=foo.html"#, "foo.html"),
        (#"ATTACHMENT; FILENAME = "spaced.txt" "#, "spaced.txt"),
        (#"attachment; filename*=UTF-8''%e5%b9%b4%e5%ba%a6%e6%8a%a5%e5%91%8a.pdf; filename="report.pdf""#, "年度报告.pdf"),
        (#"attachment; filename*=UTF-8''bad%zz; filename="fallback.txt""#, "fallback.txt"),  // malformed: the plain one
        (#"attachment; filename*=shift_jis''x; filename="plain.txt""#, "plain.txt"),  // an unknown charset too
        (#"attachment; filename="first.txt"; filename="second.txt""#, "first.txt"),
    ])
    func contentDispositionIsReadAsRFC6266Says(_ header: String, _ name: String) {
        #expect(DownloadName.fromContentDisposition(header) == name)
    }

    @Test func aDispositionWithoutANameGivesNone() {
        #expect(DownloadName.fromContentDisposition("inline") == nil)
        #expect(DownloadName.fromContentDisposition("attachment; size=3") == nil)
    }

    @Test func theURLsLastComponentIsTheNameOtherwise() {
        #expect(DownloadName.fromURL("https://example.com/files/report%20Q3.pdf?session=1#top") == "report Q3.pdf")
        #expect(DownloadName.fromURL("http://example.com/%E6%8A%A5%E5%91%8A.txt") == "报告.txt")
        #expect(DownloadName.fromURL("http://example.com/caf%E9") == "café")  // not UTF-8: ISO-8859-1
        #expect(DownloadName.fromURL("http://example.com/dir/") == "dir")
        #expect(DownloadName.fromURL("http://example.com/") == nil)
        #expect(DownloadName.suggested(contentDisposition: nil, url: "http://example.com") == DownloadName.fallback)
        #expect(DownloadName.suggested(contentDisposition: "attachment; filename=\"a.txt\"", url: "http://x/b.txt") == "a.txt")
    }

    @Test(arguments: [
        ("../../etc/passwd", "_.._etc_passwd"),
        ("..\\boot.ini", "_boot.ini"),
        (".bashrc", "bashrc"),
        ("-rf", "rf"),
        ("--help.txt", "help.txt"),
        ("tab\tand\nnewline\u{0}nul\u{7F}.txt", "tabandnewlinenul.txt"),
        ("trailing. . ", "trailing"),
        ("...", DownloadName.fallback),
        ("", DownloadName.fallback),
        ("Cafe\u{301}.txt", "Café.txt"),  // NFD composed
        // Bidirectional overrides and invisible characters that make a name read as another.
        ("invoice\u{202E}fdp.exe", "invoicefdp.exe"),
        ("\u{2066}report\u{2069}\u{200B}.pdf\u{FEFF}", "report.pdf"),
        ("family \u{1F468}\u{200D}\u{1F469}.jpg", "family \u{1F468}\u{200D}\u{1F469}.jpg"),
    ])
    func namesAreMadeSafe(_ name: String, _ safe: String) {
        #expect(DownloadName.sanitized(name) == safe)
    }

    @Test func longNamesAreShortenedKeepingTheExtension() {
        let long = String(repeating: "长", count: 200) + ".tar.gz"
        let safe = DownloadName.sanitized(long)
        #expect(safe.utf8.count <= FileName.maximumByteCount)
        #expect(safe.hasSuffix("长.gz") || safe.hasSuffix(".gz"))
        #expect(FileName.problem(with: safe) == nil)
        let noExtension = DownloadName.sanitized(String(repeating: "a", count: 400))
        #expect(noExtension.utf8.count == FileName.maximumByteCount)
    }
}

@Test func anOriginKeepsNoCredentials() {
    #expect(DownloadEngine.originWithoutCredentials("https://me:secret@example.com:8443/f?x=1") == "https://example.com:8443/f?x=1")
    #expect(DownloadEngine.originWithoutCredentials("https://example.com/f") == "https://example.com/f")
}
