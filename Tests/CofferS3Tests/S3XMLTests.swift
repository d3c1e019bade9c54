import CofferCore
@testable import CofferS3
import Testing

/// S3's XML answers read through libxml2.
struct S3XMLTests {
    @Test func textElementsComeByPathInOrder() throws {
        let document = Array("""
        <?xml version="1.0" encoding="UTF-8"?>
        <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
          <Name>b</Name><Prefix></Prefix><Marker/>
          <Contents><Key>a &amp; b 报告.txt</Key><Size>12</Size></Contents>
          <Contents><Key><![CDATA[<x>]]></Key><Size>0</Size></Contents>
          <IsTruncated>false</IsTruncated>
        </ListBucketResult>
        """.utf8)
        let texts = try #require(S3XML.texts(in: document))
        #expect(texts.map(\.path) == ["ListBucketResult/Name", "ListBucketResult/Prefix", "ListBucketResult/Marker",
                                      "ListBucketResult/Contents/Key", "ListBucketResult/Contents/Size",
                                      "ListBucketResult/Contents/Key", "ListBucketResult/Contents/Size",
                                      "ListBucketResult/IsTruncated"])
        #expect(texts.map(\.text) == ["b", "", "", "a & b 报告.txt", "12", "<x>", "0", "false"])
        #expect(S3XML.firstText(of: "Code", in: Array("<Error><Code>NoSuchBucket</Code></Error>".utf8)) == "NoSuchBucket")
    }

    @Test func malformedAndHostileDocumentsAreRefused() {
        #expect(S3XML.texts(in: Array("<a><b></a>".utf8)) == nil)
        #expect(S3XML.texts(in: []) == nil)
        #expect(S3XML.texts(in: Array(String(repeating: "<a>", count: 100).utf8) + Array(String(repeating: "</a>", count: 100).utf8)) == nil)
        // An external entity is never fetched or expanded.
        let external = Array("""
        <?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r><k>&x;</k></r>
        """.utf8)
        #expect(S3XML.texts(in: external)?.contains { $0.text.contains("root") } != true)
    }
}

/// `user.` attributes as S3 metadata: printable ASCII as it is, anything else as one RFC 2047
/// encoded word; names that map back; S3's 2 KB, tags first.
struct S3AttributeMetadataTests {
    @Test func valuesTravelAsASCIIMetadata() {
        #expect(S3Attributes.encodedValue(Array("work,urgent".utf8)) == "work,urgent")
        let chinese = S3Attributes.encodedValue(Array("报告,work".utf8))
        #expect(chinese.hasPrefix("=?UTF-8?B?") && chinese.allSatisfy(\.isASCII))
        #expect(S3Attributes.decodedValue(chinese) == Array("报告,work".utf8))
        #expect(S3Attributes.decodedValue("plain, words") == Array("plain, words".utf8))
        #expect(S3Attributes.decodedValue("=?utf-8?b?not base64!?=") == Array("=?utf-8?b?not base64!?=".utf8))
        // What a header would change (spaces at an end, binary, an encoded word's look) is encoded.
        for value: [UInt8] in [Array(" padded ".utf8), [0, 255, 7], Array("=?UTF-8?B?eA==?=".utf8)] {
            let encoded = S3Attributes.encodedValue(value)
            #expect(encoded.hasPrefix("=?UTF-8?B?"))
            #expect(S3Attributes.decodedValue(encoded) == value)
        }
    }

    @Test func namesMapBothWaysOrAreRefused() {
        #expect(S3Attributes.metadataName(of: "user.xdg.tags") == "xdg-tags")
        #expect(S3Attributes.metadataName(of: "user.xdg.origin.url") == "xdg-origin-url")
        #expect(S3Attributes.metadataName(of: "user.my_note") == "my_note")
        for unnamable in ["user.Upper", "user.with-hyphen", "user.mtime", "user.", "user.空", "trusted.x"] {
            #expect(S3Attributes.metadataName(of: unnamable) == nil, "\(unnamable)")
        }
        let back = S3Attributes.attributes(from: ["xdg-tags": "a,b", "xdg-origin-url": "https://example.org/x", "mtime": "1"])
        #expect(back == ["user.xdg.tags": Array("a,b".utf8), "user.xdg.origin.url": Array("https://example.org/x".utf8)])
    }

    @Test func twoKilobytesTagsFirst() {
        let big = [UInt8](repeating: UInt8(ascii: "x"), count: 1500)
        let attributes: UserAttributes = ["user.a.big": big, "user.b.big": big, FileTags.attribute: Array("work".utf8),
                                          "user.Bad": [1]]
        let (headers, lost) = S3Attributes.headers(for: attributes, besides: 20)
        #expect(headers.map(\.name) == ["X-Amz-Meta-xdg-tags", "X-Amz-Meta-a-big"])
        #expect(Set(lost) == [LostAttribute("user.b.big", .tooLarge), LostAttribute("user.Bad", .unnamable)])
    }
}
