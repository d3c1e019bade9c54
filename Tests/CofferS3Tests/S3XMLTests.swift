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

/// Tags as S3 metadata: printable ASCII as it is, anything else as one RFC 2047 encoded word.
struct S3TagMetadataTests {
    @Test func tagsTravelAsASCIIMetadata() {
        #expect(S3Backend.encodedWord("work,urgent") == "work,urgent")
        let chinese = S3Backend.encodedWord("报告,work")
        #expect(chinese.hasPrefix("=?UTF-8?B?") && chinese.allSatisfy(\.isASCII))
        #expect(S3Backend.decodedWord(chinese) == "报告,work")
        #expect(S3Backend.decodedWord("plain, words") == "plain, words")
        #expect(S3Backend.decodedWord("=?utf-8?b?not base64!?=") == "=?utf-8?b?not base64!?=")
    }
}
