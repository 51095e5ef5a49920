/// Issues and users in the shape of GitHub's REST API (`GET /repos/:owner/:repo/issues`,
/// `GET /users`), trimmed: many `*_url` keys, `node_id`, and a nested `user` with its own `*_url`
/// keys. The tests of `unmappedKeys` and `ignoreKeys` share them.
package enum GitHubFixture {
    /// The schema: `Issue` (a to-one `user`, so its objects take the general path) and `User`
    /// (flat, the fast path). `issueKeys` and `userKeys` are the entities' `unmappedKeys` (or
    /// `nil`), `ignoreKeys` the schema-wide patterns.
    package static func schema(issueKeys: String? = nil, userKeys: String? = nil, ignoreKeys: [String] = [],
                               version: Int = 1) -> String {
        func policy(_ value: String?) -> String { value.map { #""unmappedKeys": "\#($0)","# } ?? "" }
        let ignore = ignoreKeys.map { "\"\($0)\"" }.joined(separator: ", ")
        return """
            {
              "name": "github", "version": \(version), "ignoreKeys": [\(ignore)],
              "entities": {
                "Issue": {
                  "table": "issues", \(policy(issueKeys))
                  "attributes": {
                    "id": "integer", "number": "integer", "title": "string", "state": "string", "userID": "integer"
                  },
                  "relationships": { "user": { "toOne": "User", "foreignKey": "userID" } }
                },
                "User": {
                  "table": "users", \(policy(userKeys))
                  "attributes": { "id": "integer", "login": "string", "type": "string" }
                }
              },
              "routes": [
                { "path": "/repos/:owner/:repo/issues", "target": "Issue" },
                { "path": "/users", "target": "User" }
              ]
            }
            """
    }

    /// Two issues of octocat/Hello-World, as the API lists them.
    package static let issues = """
        [
          {
            "url": "https://api.github.com/repos/octocat/Hello-World/issues/1347",
            "repository_url": "https://api.github.com/repos/octocat/Hello-World",
            "labels_url": "https://api.github.com/repos/octocat/Hello-World/issues/1347/labels{/name}",
            "comments_url": "https://api.github.com/repos/octocat/Hello-World/issues/1347/comments",
            "html_url": "https://github.com/octocat/Hello-World/issues/1347",
            "id": 1, "node_id": "MDU6SXNzdWUx", "number": 1347, "state": "open", "title": "Found a bug",
            "user": {
              "login": "octocat", "id": 1, "node_id": "MDQ6VXNlcjE=",
              "avatar_url": "https://github.com/images/error/octocat_happy.gif", "gravatar_id": "",
              "url": "https://api.github.com/users/octocat", "html_url": "https://github.com/octocat",
              "type": "User", "site_admin": false
            },
            "locked": false, "comments": 0, "labels": [{"id": 208045946, "name": "bug"}],
            "author_association": "COLLABORATOR"
          },
          {
            "url": "https://api.github.com/repos/octocat/Hello-World/issues/1348",
            "repository_url": "https://api.github.com/repos/octocat/Hello-World",
            "labels_url": "https://api.github.com/repos/octocat/Hello-World/issues/1348/labels{/name}",
            "comments_url": "https://api.github.com/repos/octocat/Hello-World/issues/1348/comments",
            "html_url": "https://github.com/octocat/Hello-World/issues/1348",
            "id": 2, "node_id": "MDU6SXNzdWUy", "number": 1348, "state": "closed", "title": "Typo",
            "user": {
              "login": "hubot", "id": 2, "node_id": "MDQ6VXNlcjI=",
              "avatar_url": "https://github.com/images/error/hubot_happy.gif", "gravatar_id": "",
              "url": "https://api.github.com/users/hubot", "html_url": "https://github.com/hubot",
              "type": "Bot", "site_admin": false
            },
            "locked": true, "comments": 3, "labels": [],
            "author_association": "NONE"
          }
        ]
        """

    /// Two users, as `GET /users` lists them: flat objects.
    package static let users = """
        [
          {"login": "octocat", "id": 1, "node_id": "MDQ6VXNlcjE=", "avatar_url": "https://github.com/images/error/octocat_happy.gif",
           "gravatar_id": "", "url": "https://api.github.com/users/octocat", "html_url": "https://github.com/octocat",
           "type": "User", "site_admin": false},
          {"login": "hubot", "id": 2, "node_id": "MDQ6VXNlcjI=", "avatar_url": "https://github.com/images/error/hubot_happy.gif",
           "gravatar_id": "", "url": "https://api.github.com/users/hubot", "html_url": "https://github.com/hubot",
           "type": "Bot", "site_admin": true}
        ]
        """

    /// A user that gives only mapped keys.
    package static let plainUser = #"[{"login": "octocat", "id": 1, "type": "User"}]"#

    /// The kept keys of the fixture's objects, as compact JSON in document order.
    package enum Kept {
        package static let issue1 = #"{"url":"https://api.github.com/repos/octocat/Hello-World/issues/1347","#
            + #""repository_url":"https://api.github.com/repos/octocat/Hello-World","#
            + #""labels_url":"https://api.github.com/repos/octocat/Hello-World/issues/1347/labels{/name}","#
            + #""comments_url":"https://api.github.com/repos/octocat/Hello-World/issues/1347/comments","#
            + #""html_url":"https://github.com/octocat/Hello-World/issues/1347","#
            + #""locked":false,"comments":0,"labels":[{"id":208045946,"name":"bug"}],"author_association":"COLLABORATOR"}"#
        package static let user1 = #"{"avatar_url":"https://github.com/images/error/octocat_happy.gif","gravatar_id":"","#
            + #""url":"https://api.github.com/users/octocat","html_url":"https://github.com/octocat","site_admin":false}"#
    }
}
