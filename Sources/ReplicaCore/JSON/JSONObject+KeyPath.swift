extension JSONObject {
    /// Sets `value` at a key path, creating (or extending) the nested objects on the way; a member
    /// on the way that is no object is replaced by one. An empty path sets nothing.
    ///
    /// ```swift
    /// var body: JSONObject = ["id": 1]
    /// body.setValue("Ada", at: ["profile", "name"])
    /// // {"id": 1, "profile": {"name": "Ada"}}
    /// ```
    package mutating func setValue(_ value: JSONValue, at path: some Collection<String>) {
        guard let first = path.first else { return }
        let rest = path.dropFirst()
        if rest.isEmpty {
            self[first] = value
            return
        }
        var nested = self[first]?.objectValue ?? JSONObject()
        nested.setValue(value, at: rest)
        self[first] = .object(nested)
    }
}
