import Foundation
import Hummingbird
import NIOCore
import Replica
import ReplicaHTTP
import ReplicaServer
import ReplicaTestSupport
import Testing

/// Error bodies as public APIs document them, served over HTTP and read by `HTTPTransport`.
enum ErrorFixtures {
    /// GitHub, "Create a label" with an invalid color (REST docs, "Validation failed").
    static let githubLabel = #"""
        {"message":"Validation Failed","errors":[{"resource":"Label","field":"color","code":"invalid"}],"documentation_url":"https://docs.github.com/rest/issues/labels#create-a-label","status":"422"}
        """#
    /// GitHub, "Create an issue" without a title and with a body too long (a `custom` code carries a message).
    static let githubIssue = #"""
        {"message":"Validation Failed","errors":[{"resource":"Issue","field":"title","code":"missing_field"},{"resource":"Issue","code":"custom","field":"body","message":"body is too long (maximum is 65536 characters)"}],"documentation_url":"https://docs.github.com/rest/issues/issues#create-an-issue","status":"422"}
        """#
    /// RFC 9457 section 3, the validation example (with a status and a detail).
    static let problemValidation = #"""
        {
         "type": "https://example.net/validation-error",
         "title": "Your request is not valid.",
         "status": 422,
         "detail": "2 members of the request body are invalid.",
         "errors": [
                     {
                       "detail": "must be a positive integer",
                       "pointer": "#/age"
                     },
                     {
                       "detail": "must be 'green', 'red' or 'blue'",
                       "pointer": "#/profile/color"
                     }
                  ]
        }
        """#
    /// RFC 9457 section 3, the out-of-credit example.
    static let problemCredit = #"""
        {
         "type": "https://example.com/probs/out-of-credit",
         "title": "You do not have enough credit.",
         "detail": "Your current balance is 30, but that costs 50.",
         "instance": "/account/12345/msgs/abc",
         "balance": 30,
         "accounts": ["/account/12345",
                      "/account/67890"]
        }
        """#
    /// Rails (`render json: { errors: record.errors }, status: :unprocessable_entity`).
    static let rails = #"{"errors":{"name":["can't be blank"],"numberOfKids":["must be an integer","must be less than 100"]}}"#
    /// Stripe, a charge without an amount ("Errors": one `error` object; `param` names the field).
    static let stripe = #"""
        {"error":{"code":"parameter_missing","doc_url":"https://stripe.com/docs/error-codes/parameter-missing","message":"Missing required param: amount.","param":"amount","request_log_url":"https://dashboard.stripe.com/test/logs/req_Fq6xG1HY2h3o2k?t=1700000000","type":"invalid_request_error"}}
        """#
    /// Jira Cloud, an issue that is not there (404), and a create without a summary (400).
    static let jiraMissing = #"{"errorMessages":["Issue does not exist or you do not have permission to see it."],"errors":{}}"#
    static let jiraInvalid = #"{"errorMessages":[],"errors":{"summary":"You must specify a summary of the issue.","priority":"Priority name 'Urgent' is not valid"}}"#
    /// GitLab, a project created without a name and path (400: the message is field → messages).
    static let gitlab = #"{"message":{"name":["can't be blank"],"path":["can't be blank","is too short (minimum is 1 character)"]}}"#
    /// JSON:API's example error object (jsonapi.org, "Error Objects").
    static let jsonAPI = #"""
        {"errors":[{"status":"422","source":{"pointer":"/data/attributes/firstName"},"title":"Invalid Attribute","detail":"First name must contain at least two characters."}]}
        """#
    /// HAL's vnd.error, as its specification shows a validation failure.
    static let vndError = #"""
        {"message":"Validation failed","logref":42,"_links":{"describes":{"href":"http://path.to/describes"},"help":{"href":"http://path.to/help"}},"_embedded":{"errors":[{"message":"\"username\" field validation failed","logref":50,"path":"/username","_links":{"help":{"href":"http://path.to/help"}}},{"message":"\"postcode\" field validation failed","logref":55,"path":"/postcode","_links":{"help":{"href":"http://path.to/help"}}}]}}
        """#
    /// Django REST framework's serializer errors (400), and a login refused for no one field.
    static let djangoFields = #"{"email":["Enter a valid email address."],"username":["This field is required."]}"#
    static let djangoLogin = #"{"non_field_errors":["Unable to log in with provided credentials."]}"#
    /// Notion, a page created without a parent (API reference, "Status codes").
    static let notion = #"""
        {"object":"error","status":400,"code":"validation_error","message":"body failed validation: body.parent.page_id should be defined, instead was `undefined`.","request_id":"d0b7a2b1-4c52-4f8f-9d6f-5d0a5c0e3a1f"}
        """#
    /// JSend's fail: no shape Replica knows.
    static let jsend = #"{"status":"fail","data":{"title":"A title is required"}}"#
    /// A single sign-on proxy's login page, answered with 200 instead of the API's JSON.
    static let loginPage = """
        <!DOCTYPE html>
        <html lang="en">
        <head><meta charset="utf-8"><title>Sign in · Example SSO</title></head>
        <body><form method="post" action="/login"><input name="user"><button>Sign in</button></form></body>
        </html>

        """
    /// The public APIs' error bodies above, by name, with their statuses.
    static let publicAPIErrors: [(String, Int, String)] = [
        ("stripe", 400, stripe), ("jira-missing", 404, jiraMissing), ("jira-invalid", 400, jiraInvalid), ("gitlab", 400, gitlab),
        ("jsonapi", 422, jsonAPI), ("vnd-error", 400, vndError), ("django-fields", 400, djangoFields),
        ("django-login", 400, djangoLogin), ("notion", 400, notion),
    ]

    /// `loginPage` as one line, as an error shows it.
    static let loginPageLine = #"<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8"><title>Sign in · Example SSO</title></head>\n"#
        + #"<body><form method="post" action="/login"><input name="user"><button>Sign in</button></form></body>\n</html>"#

    static func response(_ status: Int, _ contentType: String?, _ body: String) -> Response {
        var headers: HTTPFields = [:]
        if let contentType { headers[.contentType] = contentType }
        return Response(status: .init(code: status), headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// A server answering every fixture, and `GET /people/4` with a person named after the `User-Agent` it got.
    static func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.post("/repos/o/r/labels") { _, _ in response(422, "application/json; charset=utf-8", githubLabel) }
        router.post("/repos/o/r/issues") { _, _ in response(422, "application/json; charset=utf-8", githubIssue) }
        router.get("/people/9") { _, _ in response(422, "application/json; charset=utf-8", githubLabel) }
        router.post("/people") { _, _ in response(422, "application/problem+json", problemValidation) }
        router.get("/account") { _, _ in response(403, "application/problem+json", problemCredit) }
        router.put("/people/1") { _, _ in response(422, "application/json", rails) }
        router.get("/cars/1") { _, _ in response(400, "application/json", jsend) }
        for (name, status, body) in publicAPIErrors {
            router.post("/errors/\(name)") { _, _ in response(status, "application/json", body) }
        }
        router.get("/people") { _, _ in response(200, "text/html; charset=utf-8", loginPage) }
        router.get("/status") { _, _ in response(200, "text/html", loginPage) }
        router.get("/cars") { _, _ in response(500, "text/plain", "Internal Server Error\n") }
        router.get("/people/1/cars") { _, _ in response(502, "text/plain", String(repeating: "x", count: 499) + "é and more") }
        router.get("/people/5") { _, _ in response(503, "text/plain", "Service Unavailable\r\n\tretry\u{1B}[0m later\n") }
        router.get("/people/2") { _, _ in response(200, "text/plain", #"{"id": 2, "name": "ann"}"#) }
        router.get("/people/3") { _, _ in response(200, nil, "\n  " + #"{"id": 3, "name": "bob"}"#) }
        router.get("/people/4") { request, _ in
            let agents = request.headers[values: .userAgent].joined(separator: " + ")
            return response(200, "application/json", #"{"id": 4, "name": "\#(agents)"}"#)
        }
        return router
    }
}

@Suite("error bodies over HTTP")
struct ErrorBodyTests {
    static func client(port: Int, schema: Schema? = nil,
                       configure: (inout ClientConfiguration) -> Void = { _ in }) throws -> (ReplicaClient, Store) {
        let schema = try schema ?? Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/people.json"))
        let store = try Store.inMemory(schema: schema)
        let base = try #require(URL(string: "http://127.0.0.1:\(port)"))
        var configuration = ClientConfiguration(transport: HTTPTransport(), baseURLs: [.production: base])
        configuration.timeout = .seconds(60)  // a hang guard: heads have taken over 10 s in a loaded parallel run
        configure(&configuration)
        return (ReplicaClient(engine: try SQLiteReplica(store: store), configuration: configuration), store)
    }

    static func error(_ body: () async throws -> Void) async -> ClientError? {
        do {
            try await body()
            return nil
        } catch {
            return error as? ClientError
        }
    }

    @Test("GitHub's 422: the message and each entry's field, code or message, and resource")
    func github() async throws {
        let server = try await StreamingServer.start(ErrorFixtures.router())
        try await withTeardown {
            let base = "http://127.0.0.1:\(server.port)"
            let (client, _) = try Self.client(port: server.port)
            let label = try #require(await Self.error { try await client.call("/repos/o/r/labels", method: .post, params: ["color": "zz"]) })
            #expect(label.description == "POST \(base)/repos/o/r/labels: HTTP 422 Validation Failed: color invalid (Label)")
            #expect(label.code == .status && label.status == 422 && label.serverMessage == "Validation Failed")
            #expect(label.details == [ClientError.Detail(field: "color", code: "invalid", resource: "Label")])
            #expect(label.fieldErrors == ["color": ["invalid"]] && label.hasErrors && label.errorMessages == ["color invalid"])

            let issue = try #require(await Self.error { try await client.call("/repos/o/r/issues", method: .post, params: ["body": "…"]) })
            #expect(issue.description == "POST \(base)/repos/o/r/issues: HTTP 422 Validation Failed: title missing_field (Issue); "
                    + "body is too long (maximum is 65536 characters) (Issue)")
            #expect(issue.fieldErrors == ["title": ["missing_field"], "body": ["body is too long (maximum is 65536 characters)"]])
            #expect(issue.details.map(\.code) == ["missing_field", "custom"])
        } teardown: {
            await server.stop()
        }
    }

    @Test("RFC 9457 problem details: title, detail and the errors' pointers; Rails' field → messages")
    func problemAndRails() async throws {
        let server = try await StreamingServer.start(ErrorFixtures.router())
        try await withTeardown {
            let base = "http://127.0.0.1:\(server.port)"
            let (client, store) = try Self.client(port: server.port)
            let problem = try #require(await Self.error { try await client.call("/people", method: .post, params: ["age": -1]) })
            #expect(problem.description == "POST \(base)/people: HTTP 422 Your request is not valid. 2 members of the request body "
                    + "are invalid: age must be a positive integer; profile/color must be 'green', 'red' or 'blue'")
            #expect(problem.fieldErrors == ["age": ["must be a positive integer"], "profile/color": ["must be 'green', 'red' or 'blue'"]])
            #expect(problem.headers["Content-Type"] == "application/problem+json")

            let credit = try #require(await Self.error { try await client.call("/account") })
            #expect(credit.description == "GET \(base)/account: HTTP 403 You do not have enough credit. "
                    + "Your current balance is 30, but that costs 50.")
            #expect(credit.details.isEmpty && !credit.hasErrors)

            let rails = try #require(await Self.error {
                try await client.call("/people/1", method: .put, params: ["name": "", "numberOfKids": "many"])
            })
            #expect(rails.description == "PUT \(base)/people/1: HTTP 422: name can't be blank; "
                    + "numberOfKids must be an integer, must be less than 100")
            #expect(rails.serverMessage == nil)
            #expect(rails.errorMessages == ["name can't be blank", "numberOfKids must be an integer", "numberOfKids must be less than 100"])
            #expect(try store.count("Person") == 0)
        } teardown: {
            await server.stop()
        }
    }

    @Test("Stripe, Jira, GitLab, JSON:API, vnd.error, Django REST framework and Notion errors: the message and the fields",
          arguments: [
            ("stripe", "HTTP 400 Missing required param: amount.", ["amount": ["Missing required param: amount."]]),
            ("jira-missing", "HTTP 404 Issue does not exist or you do not have permission to see it.", [:]),
            ("jira-invalid", "HTTP 400: summary You must specify a summary of the issue.; Priority name 'Urgent' is not valid",
             ["summary": ["You must specify a summary of the issue."], "priority": ["Priority name 'Urgent' is not valid"]]),
            ("gitlab", "HTTP 400: name can't be blank; path can't be blank, is too short (minimum is 1 character)",
             ["name": ["can't be blank"], "path": ["can't be blank", "is too short (minimum is 1 character)"]]),
            ("jsonapi", "HTTP 422: firstName First name must contain at least two characters.",
             ["firstName": ["First name must contain at least two characters."]]),
            ("vnd-error", #"HTTP 400 Validation failed: username "username" field validation failed; postcode "postcode" field validation failed"#,
             ["username": [#""username" field validation failed"#], "postcode": [#""postcode" field validation failed"#]]),
            ("django-fields", "HTTP 400: email Enter a valid email address.; username This field is required.",
             ["email": ["Enter a valid email address."], "username": ["This field is required."]]),
            ("django-login", "HTTP 400: Unable to log in with provided credentials.", [:]),
            ("notion", "HTTP 400 body failed validation: body.parent.page_id should be defined, instead was `undefined`.", [:]),
          ] as [(String, String, [String: [String]])])
    func publicAPIs(name: String, described: String, fields: [String: [String]]) async throws {
        let server = try await StreamingServer.start(ErrorFixtures.router())
        try await withTeardown {
            let base = "http://127.0.0.1:\(server.port)"
            let (client, _) = try Self.client(port: server.port)
            let error = try #require(await Self.error { try await client.call("/errors/\(name)", method: .post, params: ["a": 1]) })
            #expect(error.code == .status)
            #expect(error.description == "POST \(base)/errors/\(name): " + described)
            #expect(error.fieldErrors == fields)
        } teardown: {
            await server.stop()
        }
    }

    @Test("bodies of no known shape: their first 500 bytes on one line, cut between characters")
    func unknownBodies() async throws {
        let server = try await StreamingServer.start(ErrorFixtures.router())
        try await withTeardown {
            let base = "http://127.0.0.1:\(server.port)"
            let (client, _) = try Self.client(port: server.port)
            let plain = try #require(await Self.error { try await client.call("/cars") })
            #expect(plain.description == "GET \(base)/cars: HTTP 500: Internal Server Error")
            let jsend = try #require(await Self.error { try await client.call("/cars/1") })
            #expect(jsend.description == "GET \(base)/cars/1: HTTP 400: " + ErrorFixtures.jsend)
            let long = try #require(await Self.error { try await client.call("/people/1/cars") })
            #expect(long.description == "GET \(base)/people/1/cars: HTTP 502: " + String(repeating: "x", count: 499) + "…")
            #expect(long.body.count == 499 + "é and more".utf8.count)
            let control = try #require(await Self.error { try await client.call("/people/5") })
            #expect(control.description == #"GET \#(base)/people/5: HTTP 503: Service Unavailable\r\n\tretry\u{1B}[0m later"#)
        } teardown: {
            await server.stop()
        }
    }

    @Test("a body that is not JSON names its content type and status; JSON under another content type syncs")
    func notJSON() async throws {
        let server = try await StreamingServer.start(ErrorFixtures.router())
        try await withTeardown {
            let base = "http://127.0.0.1:\(server.port)"
            let (client, store) = try Self.client(port: server.port)
            let synced = try #require(await Self.error { try await client.call("/people") })
            #expect(synced.description == "GET \(base)/people: expected JSON, got text/html (200): " + ErrorFixtures.loginPageLine)
            #expect(synced.code == .invalidResponse && synced.status == 200)
            let adHoc = try #require(await Self.error { try await client.call("/status") })
            #expect(adHoc.description == "GET \(base)/status: expected JSON, got text/html (200): " + ErrorFixtures.loginPageLine)
            struct Status: Decodable { var ok: Bool }
            let decoded = try #require(await Self.error { _ = try await client.call("/status", as: Status.self) })
            #expect(decoded.description == adHoc.description)
            #expect(try store.count("Person") == 0)

            // JSON sent as text/plain, or without a content type, still syncs.
            try await client.call("/people/2")
            try await client.call("/people/3")
            #expect(try store.rows("Person").map { $0["name"] } == [.string("ann"), .string("bob")])
        } teardown: {
            await server.stop()
        }
    }

    @Test("User-Agent: replica/<version> unless the configuration, the schema or the call gives one")
    func userAgent() async throws {
        let server = try await StreamingServer.start(ErrorFixtures.router())
        try await withTeardown {
            func agent(_ client: ReplicaClient, _ store: Store, headers: HeaderFields = HeaderFields()) async throws -> String? {
                try await client.call("/people/4", headers: headers)
                guard case .string(let name)? = try store.rows("Person").first?["name"] else { return nil }
                return name
            }
            let (plain, plainStore) = try Self.client(port: server.port)
            #expect(try await agent(plain, plainStore) == "replica/\(ReplicaVersion.current)")
            #expect(ClientConfiguration.defaultUserAgent == "replica/\(ReplicaVersion.current)")

            let (configured, configuredStore) = try Self.client(port: server.port) { $0.headers["user-agent"] = "app/1.0" }
            #expect(try await agent(configured, configuredStore) == "app/1.0")

            var schema = try Schema(contentsOf: packageRoot.appendingPathComponent("Schemas/people.json"))
            schema.headers = ["User-Agent": "people-sync/2"]
            let (fromSchema, schemaStore) = try Self.client(port: server.port, schema: schema) { $0.headers["User-Agent"] = "app/1.0" }
            #expect(try await agent(fromSchema, schemaStore) == "people-sync/2")
            #expect(try await agent(fromSchema, schemaStore, headers: ["User-Agent": "call/3"]) == "call/3")
        } teardown: {
            await server.stop()
        }
    }
}

@Suite("replica sync: error bodies")
struct SyncCommandErrorTests {
    @Test("prints the server's message and field errors, or the content type of a body that is not JSON; exits 1")
    func errors() async throws {
        let server = try await StreamingServer.start(ErrorFixtures.router())
        try await withTeardown {
            let directory = try TemporaryDirectory("replica-sync-errors")
            defer { directory.remove() }
            let base = "http://127.0.0.1:\(server.port)"
            let schema = packageRoot.appendingPathComponent("Schemas/people.json").path
            // The server answers from this test process's cooperative threads, which a loaded parallel
            // run can hold for longer than the default 30 s: the output is what is checked, not the time.
            let output = try await ChildProcess.run(ChildProcess.replica, ["sync", "--db", directory.path("people.sqlite"),
                                                                     "--schema", schema, "--base-url", base, "--timeout", "300",
                                                                     "/people/9", "/people", "/cars", "/people/2"])
            #expect(output.status == 1)
            #expect(output.stdout == "/people/2: 200, inserted 1, updated 0, deleted 0 (1 objects)\n")
            #expect(output.stderr == """
                Error: /people/9: GET \(base)/people/9: HTTP 422 Validation Failed: color invalid (Label)
                Error: /people: GET \(base)/people: expected JSON, got text/html (200): \(ErrorFixtures.loginPageLine)
                Error: /cars: GET \(base)/cars: HTTP 500: Internal Server Error

                """)
        } teardown: {
            await server.stop()
        }
    }

    @Test("sends the schema's User-Agent, which --header overrides")
    func userAgent() async throws {
        let server = try await StreamingServer.start(ErrorFixtures.router())
        try await withTeardown {
            let directory = try TemporaryDirectory("replica-sync-agent")
            defer { directory.remove() }
            let base = "http://127.0.0.1:\(server.port)"
            let people = try String(contentsOf: packageRoot.appendingPathComponent("Schemas/people.json"), encoding: .utf8)
            let schema = directory.url("agent.json")
            try Data(people.replacingOccurrences(of: #""version": 1,"#, with: #""version": 1, "headers": {"User-Agent": "people-sync/2"},"#)
                .utf8).write(to: schema)
            for (name, extra, expected) in [("plain", [String](), "people-sync/2"), ("header", ["--header", "User-Agent: cli/3"], "cli/3")] {
                let db = directory.path("\(name).sqlite")
                let output = try await ChildProcess.run(ChildProcess.replica, ["sync", "--db", db, "--schema", schema.path,
                                                                         "--base-url", base] + extra + ["/people/4"])
                #expect(output.status == 0, "\(output.stderr)")
                #expect(try Store(path: db).rows("Person").map { $0["name"] } == [.string(expected)])
            }
        } teardown: {
            await server.stop()
        }
    }
}

/// The mock server answering a refused value in each shape it can take (`MockValidationErrors`),
/// read by the real HTTP client: the same field errors, whatever the shape.
@Suite("error bodies from the mock server")
struct MockServerErrorBodyTests {
    @Test("Rails, ApiModel, GitHub, RFC 9457, Stripe and JSON:API shapes give the client the field and its message",
          arguments: ["rails", "apiModel", "github", "problemDetails", "stripe", "jsonAPI"])
    func shapes(shape: String) async throws {
        let schema = try CompositeKeyMockServerTests.schema()
        var options = MockServerOptions()
        options.validationErrors = ["rails": MockValidationErrors(), "apiModel": .apiModel, "github": .github,
                                    "problemDetails": .problemDetails, "stripe": .stripe, "jsonAPI": .jsonAPI][shape]
            ?? MockValidationErrors()
        let server = try await MockServer.start(resources: MockResource.resources(for: schema), options: options)
        try await withTeardown {
            let base = server.baseURL
            let (client, store) = try ErrorBodyTests.client(port: server.port, schema: schema)
            let refused = try #require(await ErrorBodyTests.error {
                try await client.call("/refs/octocat/Hello-World", method: .post,
                                      params: ["ref": "refs/heads/x", "object": ["sha": 5, "type": "commit"]])
            })
            #expect(refused.status == (shape == "stripe" ? 400 : 422))
            switch shape {
            case "stripe":
                #expect(refused.description == "POST \(base)/refs/octocat/Hello-World: HTTP 400 object.sha must be a string")
                #expect(refused.fieldErrors == ["object.sha": ["object.sha must be a string"]])
                #expect(refused.details.map(\.code) == ["parameter_invalid"])
            case "jsonAPI":
                #expect(refused.description == "POST \(base)/refs/octocat/Hello-World: HTTP 422: object/sha must be a string")
                #expect(refused.fieldErrors == ["object/sha": ["must be a string"]])
                #expect(refused.headers["Content-Type"] == "application/vnd.api+json")
            case "github":
                #expect(refused.description == "POST \(base)/refs/octocat/Hello-World: HTTP 422 Validation Failed: "
                        + "object.sha must be a string (Ref)")
                #expect(refused.fieldErrors == ["object.sha": ["object.sha must be a string"]])
                #expect(refused.details.map(\.code) == ["custom"])
            case "problemDetails":
                #expect(refused.description == "POST \(base)/refs/octocat/Hello-World: HTTP 422 Unprocessable Content: "
                        + "1 member of the request body is invalid: object/sha must be a string")
                #expect(refused.fieldErrors == ["object/sha": ["must be a string"]])
                #expect(refused.headers["Content-Type"] == "application/problem+json")
            default:
                #expect(refused.description == "POST \(base)/refs/octocat/Hello-World: HTTP 422: object.sha must be a string")
                #expect(refused.fieldErrors == ["object.sha": ["must be a string"]])
            }
            #expect(try store.count("Ref") == 0)
        } teardown: {
            await server.stop()
        }
    }
}
