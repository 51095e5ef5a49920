/// Places whose address is a nested object, mapped by attributes with dotted `jsonKey`s
/// (`address.city`): the schema the mock server's and the client's nested-key tests share.
package let nestedPlacesSchema = """
    {
      "name": "places", "version": 1, "keyConvention": "camelCase",
      "entities": {
        "Place": {
          "table": "places",
          "attributes": {
            "id": "integer",
            "name": "string",
            "city": { "type": "string", "jsonKey": "address.city" },
            "zip": { "type": "string", "jsonKey": "address.zip" },
            "lat": { "type": "double", "jsonKey": "address.geo.lat" }
          }
        }
      },
      "routes": [
        { "path": "/places", "target": "Place", "stale": "delete" },
        { "path": "/places/:id", "target": "Place" }
      ]
    }
"""
