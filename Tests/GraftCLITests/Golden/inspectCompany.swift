// The expected output `inspectCompany`, checked by the tests; `GRAFT_RECORD=1 swift test` rewrites it.
extension Golden {
    static let inspectCompany = #"""
        Model examples/Company/Company.xcdatamodeld (xcdatamodeld)
        Versions: Company, Company 2; current: Company 2
        Version identifiers: 2
        Version checksum: 876mw2h20g+gEvSiMEda9XEC60o+LSxYRHvVGx/R24U=
        Entities: 5

        Department
          version hash vQtXG22NfFJGIVPHT60PIQ8cEKNt+XDBaD4kXBH0Za4=
          attributes
            budget    Decimal     optional, default 0, min 0
            code      Integer 16  required, default 1, min 1, max 999
            location  String      optional, default "Headquarters"
            name      String      required, min length 1, max length 60
          relationships
            employees  to-many Employee         inverse department, count 3…40, Deny
            projects   to-many ordered Project  inverse department, Cascade
          fetched properties
            recentHires  Employee  where department == $FETCH_SOURCE AND hireDate >= CAST(757382400, "NSDate")
          unique (name)

        Employee
          version hash rRWoFtVFB58as/PjT0ANTx4ceM010GSe1BbUKMGYJAg=
          attributes
            badge           UUID           optional
            email           String         optional, matches /[^@ ]+@[^@ ]+\.[a-z]+/
            employeeID      Integer 64     required, default 0
            hireDate        Date           required
            homepage        URI            optional
            isRemote        Boolean        required, default NO
            name            String         required, min length 1
            photo           Binary         optional, external storage
            preferences     Transformable  optional, transformer NSSecureUnarchiveFromData
            rating          Float          optional, default 0.0
            salary          Decimal        required, default 0, min 0
            workload        Double         optional, min 0.0, max 1.0
            yearsOfService  Integer 32     optional, default 0
          relationships
            department  to-one Department  inverse employees, required, Nullify
            manager     to-one Manager     inverse directReports, Nullify
            projects    to-many Project    inverse members, Nullify
          unique (employeeID)

        Flunky : Employee
          version hash SQeUCCuBUN5Tbh02cxbiQLXpBo9+aFQYFA4cUdfx5kk=
          inherits 16 properties
          attributes
            coffeeOrder  String  optional

        Manager : Employee
          version hash 4ebGV0Vy8hqVZELhAcij5f9jhWnrAlFBPFqnZjQ6I8A=
          inherits 16 properties
          attributes
            parkingSpot  Integer 16  optional
          relationships
            directReports  to-many Employee  inverse manager, Nullify

        Project
          version hash taTbJ9M6x/kz+gADRCwREuF3gbgr/Uk/EQWyYEixhJg=
          attributes
            deadline  Date    optional
            title     String  required
          relationships
            department  to-one Department  inverse projects, Nullify
            members     to-many Employee   inverse projects, Nullify

        """#
}
