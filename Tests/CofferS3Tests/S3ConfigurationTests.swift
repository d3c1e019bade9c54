@testable import CofferS3
import CofferCore
import CofferTestSupport
import Foundation
import Testing

/// Locations, endpoints, regions and credentials resolved as the AWS tools resolve them,
/// from environments and profile files made here.
struct S3ConfigurationTests {
    let home = TemporaryDirectory("s3-home")

    func resolve(_ environment: [String: String], location: String = "s3://coffer-test/Projects/2026",
                 endpoint: String? = nil) throws(CofferError) -> S3Configuration {
        try S3Configuration.resolve(try S3Location(parsing: location), endpoint: endpoint, environment: environment,
                                    home: home.path)
    }

    @Test func locationsAreParsedStrictly() throws {
        let location = try S3Location(parsing: "s3://coffer-test/Projects/2026/")
        #expect(location.bucket == "coffer-test" && location.prefix == "Projects/2026/")
        #expect(location.description == "s3://coffer-test/Projects/2026")
        #expect(try S3Location(parsing: "s3://a.b-c").prefix == "")
        #expect(try S3Location(parsing: "s3://bucket/报告 2026").prefix == "报告 2026/")
        for bad in ["coffer-test", "s3://", "s3://ab", "s3://Upper", "s3://-dash", "s3://dot.", "s3://a..b",
                    "s3://bucket//x", "s3://bucket/a/../b", "s3://bucket/./b", "s3://under_score",
                    "s3://" + String(repeating: "a", count: 64)] {
            #expect(throws: CofferError.self, "\(bad)") { try S3Location(parsing: bad) }
        }
    }

    @Test func theEnvironmentComesFirst() throws {
        let configuration = try resolve([
            "AWS_ACCESS_KEY_ID": "test:tester", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "eu-central-1",
            "AWS_ENDPOINT_URL": "http://127.0.0.1:18480",
        ])
        #expect(configuration.credentials == S3Credentials(accessKeyID: "test:tester", secretAccessKey: "testing"))
        #expect(configuration.region == "eu-central-1")
        #expect(configuration.endpoint.absoluteString == "http://127.0.0.1:18480")
        #expect(configuration.addressing == .path)
        #expect(!"\(configuration)".contains("testing"))
        // `--s3-endpoint` wins over the environment, AWS_ENDPOINT_URL_S3 over AWS_ENDPOINT_URL.
        let flagged = try resolve([
            "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_ENDPOINT_URL": "http://127.0.0.1:1",
        ], endpoint: "https://objects.example.org")
        #expect(flagged.endpoint.absoluteString == "https://objects.example.org")
        let specific = try resolve([
            "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_ENDPOINT_URL": "http://127.0.0.1:1",
            "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:2",
        ])
        #expect(specific.endpoint.absoluteString == "http://127.0.0.1:2")
        // AWS itself: the regional endpoint, the bucket in the host name.
        let aws = try resolve([
            "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_DEFAULT_REGION": "ap-southeast-1",
        ])
        #expect(aws.endpoint.absoluteString == "https://s3.ap-southeast-1.amazonaws.com" && aws.addressing == .virtual)
        #expect(try resolve(["AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"], location: "s3://with.dots").addressing == .path)
    }

    @Test func profilesAreReadFromTheAWSFiles() throws {
        _ = home.make([
            ".aws/credentials": """
            # keys
            [default]
            aws_access_key_id = DEFAULTKEY
            aws_secret_access_key = defaultsecret

            [ceph]
            aws_access_key_id=test:tester
            aws_secret_access_key=testing
            aws_session_token = tok
            """,
            ".aws/config": """
            [default]
            region = us-west-2

            [profile ceph]
            region = default
            endpoint_url = http://127.0.0.1:18480
            s3 =
              addressing_style = virtual
            ; a comment
            [sso-session corp]
            region = nowhere
            """,
        ])
        let plain = try resolve([:])
        #expect(plain.credentials.accessKeyID == "DEFAULTKEY" && plain.region == "us-west-2")
        let ceph = try resolve(["AWS_PROFILE": "ceph"])
        #expect(ceph.credentials == S3Credentials(accessKeyID: "test:tester", secretAccessKey: "testing", sessionToken: "tok"))
        #expect(ceph.region == "default" && ceph.endpoint.absoluteString == "http://127.0.0.1:18480")
        #expect(ceph.addressing == .virtual)
        // The environment's region over the profile's.
        #expect(try resolve(["AWS_PROFILE": "ceph", "AWS_REGION": "r1"]).region == "r1")
        // Files named by the environment instead.
        _ = home.make(["elsewhere/keys": "[default]\naws_access_key_id = OTHER\naws_secret_access_key = x\n"])
        #expect(try resolve(["AWS_SHARED_CREDENTIALS_FILE": home.path + "/elsewhere/keys"]).credentials.accessKeyID == "OTHER")
    }

    @Test func missingCredentialsAndBadEndpointsAreExplained() throws {
        let missing = #expect(throws: CofferError.self) { try resolve(["AWS_PROFILE": "nobody"]) }
        #expect(missing?.kind == .invalidArgument)
        #expect(missing?.detail?.contains("nobody") == true && missing?.detail?.contains("AWS_ACCESS_KEY_ID") == true)
        for endpoint in ["ftp://host", "http://", "http://host/path", "http://user:pw@host", "not a url"] {
            let error = #expect(throws: CofferError.self, "\(endpoint)") {
                try resolve(["AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "SECRETVALUE"], endpoint: endpoint)
            }
            #expect(error?.detail?.contains("SECRETVALUE") == false)
        }
    }
}
