// The expected output `smallJson`, checked by ClipboardGoldenTests; `GRAFT_RECORD=1 swift test` rewrites it.
extension ClipboardGolden {
    static let smallJson = #"""
        {
          "format": "graft-clipboard",
          "version": 1,
          "encoding": {"date": "seconds since 2001-01-01T00:00:00Z", "decimal": "string", "binary": "base64", "nonFiniteNumbers": "strings NaN, Infinity, -Infinity", "integer64": "number"},
          "model": {
            "entities": [
              {"name": "Department", "versionHash": "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=", "attributes": [{"name": "name", "type": "string"}], "relationships": [{"name": "employees", "toMany": true, "ordered": false}]},
              {"name": "Employee", "versionHash": "AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=", "attributes": [{"name": "salary", "type": "decimal"}, {"name": "hired", "type": "date"}], "relationships": [{"name": "department", "toMany": false, "ordered": false}]}
            ],
            "versionIdentifiers": []
          },
          "source": {"store": "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0"},
          "roots": ["o1"],
          "objects": [
            {"id": "o1", "entity": "Department", "attributes": {"name": "Sales"}, "relationships": {"employees": ["o2", "r1"]}},
            {"id": "o2", "entity": "Employee", "attributes": {"salary": "52000.5", "hired": 1.5}, "relationships": {"department": "o1"}}
          ],
          "references": [
            {"id": "r1", "entity": "Employee", "identity": {"salary": "5"}}
          ]
        }

        """#
}
