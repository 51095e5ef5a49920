/// The demo's schema: `Schemas/blog.json`, built in so that `replica demo` needs no file (a test
/// checks that both stay the same).
enum DemoSchema {
    static let blogJSON = #"""
{
  "$schema": "./schema.schema.json",
  "name": "blog",
  "version": 1,
  "description": "RSAPI's blog: users with their posts and comments.",
  "keyConvention": "snake_case",
  "entities": {
    "User": {
      "table": "users",
      "primaryKey": "userID",
      "jsonIdKey": "user_id",
      "attributes": {
        "userID": "integer",
        "name": { "type": "string", "nullable": false },
        "email": "string",
        "avatarSm": { "type": "string", "description": "URL of the small avatar (JSON key avatar_sm)" },
        "friends": { "type": "json", "description": "ids of the user's friends, kept as JSON" },
        "createdAt": "date"
      },
      "relationships": {
        "posts": { "toMany": "Post", "inverse": "author" },
        "comments": { "toMany": "Comment", "inverse": "author" }
      },
      "indexes": [ { "attributes": ["email"] } ]
    },
    "Post": {
      "table": "posts",
      "namespace": "post",
      "attributes": {
        "id": "integer",
        "userID": "integer",
        "title": { "type": "string", "nullable": false },
        "body": "string",
        "published": { "type": "bool", "nullable": false, "default": false },
        "tags": "json",
        "createdAt": "date"
      },
      "relationships": {
        "author": { "toOne": "User", "foreignKey": "userID" },
        "comments": { "toMany": "Comment", "inverse": "post" }
      },
      "indexes": [ { "attributes": ["userID", "createdAt"] } ]
    },
    "Comment": {
      "table": "comments",
      "attributes": {
        "id": "integer",
        "postID": "integer",
        "userID": "integer",
        "body": { "type": "string", "nullable": false },
        "createdAt": "date"
      },
      "relationships": {
        "post": { "toOne": "Post", "foreignKey": "postID" },
        "author": { "toOne": "User", "foreignKey": "userID" }
      }
    }
  },
  "routes": [
    { "path": "/users", "target": "User", "stale": "delete" },
    { "path": "/users/:userID", "target": "User" },
    { "path": "/users/:userID/posts", "target": "Post", "stale": "delete" },
    { "path": "/posts/:id", "target": "Post" },
    { "method": "POST", "path": "/posts", "target": "Post" },
    { "path": "/posts/:postID/comments", "target": "Comment", "stale": "delete" },
    { "path": "/bootstrap", "target": "MANY" },
    { "path": "/stats", "target": "DATA" }
  ]
}
"""#
}
