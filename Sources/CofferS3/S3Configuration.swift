public import CofferCore
public import Foundation

/// Where an S3 mount's objects are: `s3://BUCKET[/PREFIX]`.
public struct S3Location: Sendable, Equatable, CustomStringConvertible {
    public var bucket: String
    /// Empty, or names ending in `/` (`Projects/2026/`): every key of the mount starts with it.
    public var prefix: String

    /// Parses `s3://BUCKET[/PREFIX]`. Bucket names follow S3's rules (3–63 lower-case letters,
    /// digits, dots and hyphens, starting and ending with a letter or digit); the prefix may
    /// not hold empty names (`a//b`), `.` or `..`.
    public init(parsing text: String) throws(CofferError) {
        guard text.hasPrefix("s3://") else { throw Self.invalid(text, "it must start with s3://") }
        let rest = text.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        let isAllowed: (Character) -> Bool = { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "-" }
        guard (3...63).contains(bucket.count), bucket.allSatisfy(isAllowed),
              let first = bucket.first, let last = bucket.last, first != "." && first != "-", last != "." && last != "-",
              !bucket.contains("..") else {
            throw Self.invalid(text, "“\(bucket)” is not a bucket name")
        }
        var names = rest.dropFirst(bucket.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if names.first == "" { names.removeFirst() }
        if names.last == "" { names.removeLast() }
        guard names.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else {
            throw Self.invalid(text, "the prefix has an empty name, “.” or “..”")
        }
        self.bucket = bucket
        self.prefix = names.isEmpty ? "" : names.joined(separator: "/") + "/"
    }

    public var description: String { "s3://\(bucket)" + (prefix.isEmpty ? "" : "/" + prefix.dropLast()) }

    private static func invalid(_ text: String, _ reason: String) -> CofferError {
        CofferError(.invalidArgument, detail: "“\(text)” is not an S3 location: \(reason)")
    }
}

/// How requests name the bucket: in the path (`https://host/bucket/key`, what Ceph RGW and
/// other S3-compatible servers expect) or in the host name (`https://bucket.host/key`,
/// what AWS prefers).
public enum S3Addressing: String, Sendable {
    case path
    case virtual
}

/// Everything needed to reach one bucket, resolved the way the AWS command-line tools do.
public struct S3Configuration: Sendable, CustomStringConvertible {
    public var location: S3Location
    /// `http` or `https`, with host and port; no path.
    public var endpoint: URL
    public var region: String
    public var addressing: S3Addressing
    public var credentials: S3Credentials

    /// The settings for `location`, taken as the AWS tools take them:
    /// - the endpoint: `endpoint` (from `--s3-endpoint`), else `AWS_ENDPOINT_URL_S3`, else
    ///   `AWS_ENDPOINT_URL`, else the profile's `endpoint_url`, else AWS's regional endpoint;
    /// - the region: `AWS_REGION`, else `AWS_DEFAULT_REGION`, else the profile's `region`,
    ///   else `us-east-1`;
    /// - the credentials: `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (with
    ///   `AWS_SESSION_TOKEN`), else the profile in the credentials file
    ///   (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`), else in the config file
    ///   (`AWS_CONFIG_FILE`, else `~/.aws/config`); the profile is `AWS_PROFILE`, else `default`;
    /// - the addressing: the profile's `s3 = addressing_style`, else path style for an
    ///   endpoint of one's own and virtual hosts for AWS's.
    public static func resolve(_ location: S3Location, endpoint: String?, environment: [String: String],
                               home: String) throws(CofferError) -> S3Configuration {
        func setting(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let profile = setting("AWS_PROFILE") ?? "default"
        let config = AWSProfileFile(path: setting("AWS_CONFIG_FILE") ?? home + "/.aws/config", isConfig: true)
        let shared = AWSProfileFile(path: setting("AWS_SHARED_CREDENTIALS_FILE") ?? home + "/.aws/credentials", isConfig: false)
        let profileSettings = config.profiles[profile] ?? [:]
        let region = setting("AWS_REGION") ?? setting("AWS_DEFAULT_REGION") ?? profileSettings["region"] ?? "us-east-1"

        let credentials: S3Credentials
        if let key = setting("AWS_ACCESS_KEY_ID"), let secret = setting("AWS_SECRET_ACCESS_KEY") {
            credentials = S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: setting("AWS_SESSION_TOKEN"))
        } else if let found = [shared.profiles[profile], config.profiles[profile]].compactMap({ $0 }).lazy
            .compactMap(Self.credentials(in:)).first {
            credentials = found
        } else {
            throw CofferError(.invalidArgument, detail: "no S3 credentials for the profile “\(profile)”: set "
                              + "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or add the profile to ~/.aws/credentials")
        }

        let configured = endpoint ?? setting("AWS_ENDPOINT_URL_S3") ?? setting("AWS_ENDPOINT_URL") ?? profileSettings["endpoint_url"]
        let endpointURL: URL
        if let configured {
            guard let url = URL(string: configured), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                  url.host != nil, url.path.isEmpty || url.path == "/", url.query == nil, url.user == nil else {
                throw CofferError(.invalidArgument, detail: "“\(configured)” is not an S3 endpoint (http or https, a host, no path)")
            }
            endpointURL = url
        } else {
            endpointURL = URL(string: "https://s3.\(region).amazonaws.com")!
        }
        let style = profileSettings["s3.addressing_style"].flatMap(S3Addressing.init(rawValue:))
        // A bucket with dots cannot be a host name under AWS's certificate.
        let addressing = style ?? (configured == nil && !location.bucket.contains(".") ? .virtual : .path)
        return S3Configuration(location: location, endpoint: endpointURL, region: region, addressing: addressing,
                               credentials: credentials)
    }

    private static func credentials(in settings: [String: String]) -> S3Credentials? {
        guard let key = settings["aws_access_key_id"], let secret = settings["aws_secret_access_key"] else { return nil }
        return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: settings["aws_session_token"])
    }

    public var description: String {
        "\(location) at \(endpoint.absoluteString) (\(region), \(addressing.rawValue) style, \(credentials))"
    }
}

/// An AWS profile file (`~/.aws/credentials`, `~/.aws/config`): `[name]` sections (in the
/// config file `[profile name]`, and `[default]`) of `key = value` lines; `#` and `;`
/// start comments; an indented line after `key =` is a sub-setting, kept as `key.sub`
/// (`s3 =` then `  addressing_style = path`). A missing or unreadable file has no profiles.
struct AWSProfileFile {
    var profiles: [String: [String: String]] = [:]

    init(path: String, isConfig: Bool) {
        self.init(text: (try? String(contentsOfFile: path, encoding: .utf8)) ?? "", isConfig: isConfig)
    }

    init(text: String, isConfig: Bool) {
        var section: String?
        var parent: String?
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            let line = String(raw)
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { continue }
            if trimmed.hasPrefix("[") && trimmed.hasSuffix("]") {
                var name = trimmed.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                if isConfig {
                    if name.hasPrefix("profile ") {
                        name = String(name.dropFirst("profile ".count)).trimmingCharacters(in: .whitespaces)
                    } else if name != "default" {
                        section = nil  // `[sso-session …]`, `[services …]`: not profiles
                        continue
                    }
                }
                section = name
                parent = nil
                if profiles[name] == nil { profiles[name] = [:] }
                continue
            }
            guard let section, let equals = trimmed.firstIndex(of: "=") else { continue }
            let key = trimmed[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            let indented = line.first == " " || line.first == "\t"
            if indented, let parent {
                profiles[section]?["\(parent).\(key)"] = value
            } else if value.isEmpty {
                parent = key
            } else {
                parent = nil
                profiles[section]?[key] = value
            }
        }
    }
}
