// The expected output `smallXml`, checked by ClipboardGoldenTests; `GRAFT_RECORD=1 swift test` rewrites it.
extension ClipboardGolden {
    static let smallXml = #"""
        <?xml version="1.0" encoding="UTF-8"?>
        <clipboard format="graft-clipboard" version="1">
          <encoding date="seconds since 2001-01-01T00:00:00Z" decimal="string" binary="base64" nonFiniteNumbers="NaN, Infinity, -Infinity" controlCharacters="base64 of the string's UTF-8 bytes, marked encoding='base64'"/>
          <model>
            <entity name="Department" versionHash="AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=">
              <attribute name="name" type="string"/>
              <relationship name="employees" toMany="true" ordered="false"/>
            </entity>
            <entity name="Employee" versionHash="AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=">
              <attribute name="salary" type="decimal"/>
              <attribute name="hired" type="date"/>
              <relationship name="department" toMany="false" ordered="false"/>
            </entity>
          </model>
          <source store="0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0"/>
          <roots>
            <root ref="o1"/>
          </roots>
          <objects>
            <object id="o1" entity="Department">
              <attribute name="name">Sales</attribute>
              <relationship name="employees"><target ref="o2"/><target ref="r1"/></relationship>
            </object>
            <object id="o2" entity="Employee">
              <attribute name="salary">52000.5</attribute>
              <attribute name="hired">1.5</attribute>
              <relationship name="department"><target ref="o1"/></relationship>
            </object>
          </objects>
          <references>
            <reference id="r1" entity="Employee">
              <identity name="salary">5</identity>
            </reference>
          </references>
        </clipboard>

        """#
}
