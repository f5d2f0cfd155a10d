import GraftModel

/// Where Core Data keeps to-many relationships that have no to-one inverse: many-to-manys in join tables,
/// and to-manys without inverse in a column it adds to the destination's table.
///
/// The rules, with their evidence, are in `Formats/sqlite-store.md` ("Many-to-many", "To-many without
/// inverse").
extension SQLiteSchema {
    /// One side of a relationship, by its declaring entity's model index and the relationship's index.
    struct Side: Hashable {
        var entity: Int
        var relationship: Int
    }

    /// The entities in the order Core Data visits them when it lays out relationships: by name, each with
    /// its inherited relationships first, then its own, in the model's order.
    private var visitOrder: [EntityDescription] {
        model.descriptions.sorted { $0.name < $1.name }
    }

    /// The declaring side of `relationship` as seen from `entity` (which may inherit it).
    func side(of relationship: RelationshipDescription, from entity: EntityDescription) -> Side {
        Side(
            entity: Self.declaringEntity(of: relationship.name, from: entity, in: model).index,
            relationship: relationship.index)
    }

    /// Join tables for every many-to-many, named after the side Core Data meets first.
    ///
    /// Core Data visits entities in name order and, in each, every relationship it has, inherited ones
    /// included; the first side of a pair it meets names the table `Z_<n><NAME>`, `n` being the number of
    /// the entity that declares that side. Each side's column is named `Z_<n><OTHER SIDE'S NAME>` with its
    /// own entity's number and holds its own objects' keys; a relationship that is its own inverse pairs
    /// that column with one named `REFLEXIVE`. When a side is ordered, the other side's column has an
    /// order column, `Z_FOK_` followed by that column's name without its `Z_`. Join column names are unique
    /// in the store: a repeated one gets a numeric suffix (`Z_3REPRESENTATIVEASSETS1`).
    mutating func deriveManyToManys() {
        let descriptions = model.descriptions
        var done: Set<Side> = []
        var columnNames = UniqueNames()
        func unique(_ base: String) -> String { columnNames.claim(base) }
        for visited in visitOrder {
            for relationship in visited.relationships where relationship.isToMany && !relationship.isTransient {
                guard let inverseIndex = relationship.inverseIndex else { continue }
                let destination = descriptions[relationship.destinationIndex]
                let inverse = destination.relationships[inverseIndex]
                guard inverse.isToMany else { continue }
                let own = side(of: relationship, from: visited)
                let other = side(of: inverse, from: destination)
                guard done.insert(own).inserted else { continue }
                done.insert(other)
                let number = entityNumbers[own.entity]
                let otherNumber = entityNumbers[other.entity]
                let name = relationship.name.uppercased()
                let reflexive = own == other
                // The other side's column is named first (Core Data completes the inverse before this side),
                // each key column followed by the order column of the position it holds.
                let destinationBase = "Z_\(otherNumber)" + name
                let sourceBase = "Z_\(number)" + inverse.name.uppercased()
                let destinationColumn = reflexive ? "REFLEXIVE" : unique(destinationBase)
                var sourceOrderColumn: String?
                if relationship.isOrdered {
                    sourceOrderColumn = reflexive ? "FOK_REFLEXIVE" : unique("Z_FOK_" + destinationBase.dropFirst(2))
                }
                let sourceColumn = unique(sourceBase)
                var destinationOrderColumn: String?
                if inverse.isOrdered && !reflexive {
                    destinationOrderColumn = unique("Z_FOK_" + sourceBase.dropFirst(2))
                }
                addJoinTable(
                    JoinTable(
                        name: "Z_\(number)" + name, entity: own.entity, relationship: own.relationship,
                        sourceColumn: sourceColumn, destinationColumn: destinationColumn,
                        sourceOrderColumn: sourceOrderColumn, destinationOrderColumn: destinationOrderColumn,
                        inverse: reflexive ? nil : (other.entity, other.relationship), isReflexive: reflexive))
            }
        }
    }

    /// Columns for to-manys without inverse: Core Data gives the destination a hidden to-one back to the
    /// owner, `Z<n><NAME>` in the destination's table (`n` the number of the entity declaring the
    /// to-many), indexed like any to-one, with `Z<n>_<n><NAME>` for the owner's entity number when the
    /// owner's entity has subentities and `Z_FOK_<n><NAME>` for the position when the to-many is ordered.
    mutating func deriveVirtualToOnes() {
        let descriptions = model.descriptions
        for entity in descriptions {
            for relationship in entity.declaration.relationships
            where relationship.isToMany && !relationship.isTransient {
                guard let index = entity.relationshipIndexByName[relationship.name],
                    entity.relationships[index].inverseIndex == nil
                else { continue }
                let destination = descriptions[entity.relationships[index].destinationIndex]
                let tableIndex = tableOfEntity[destination.index]
                let name = "\(entityNumbers[entity.index])" + relationship.name.uppercased()
                var names = UniqueNames(Set(tables[tableIndex].columns.map(\.name)))
                func claim(_ base: String) -> String { names.claim(base) }
                let keyColumn = claim("Z" + name)
                tables[tableIndex].columns.append(
                    Column(
                        name: keyColumn, type: "INTEGER", role: .virtualToOne(entity: entity.index, relationship: index)
                    ))
                var entityColumn: String?
                if !entity.descendantIndices.isEmpty {
                    entityColumn = claim("Z\(entityNumbers[entity.index])_" + name)
                    tables[tableIndex].columns.append(
                        Column(
                            name: entityColumn!, type: "INTEGER",
                            role: .virtualToOneEntity(entity: entity.index, relationship: index)))
                }
                var orderColumn: String?
                if relationship.isOrdered {
                    orderColumn = claim("Z_FOK_" + name)
                    tables[tableIndex].columns.append(
                        Column(
                            name: orderColumn!, type: "INTEGER",
                            role: .virtualOrderKey(entity: entity.index, relationship: index)))
                }
                let storage = ToManyStorage.virtualColumn(
                    VirtualColumn(
                        table: tableIndex, column: keyColumn, entityColumn: entityColumn, orderColumn: orderColumn))
                for heir in [entity.index] + entity.descendantIndices { toManyStorage[heir][index] = storage }
            }
        }
    }

    /// Graft's join table for the owners of a to-many without inverse after the first, which Core Data's
    /// layout has no room for: `Z_<n><NAME>` with `Z_<n>INVERSE_<NAME>` (the owners' keys), `Z_<m><NAME>`
    /// (the related keys) and, when ordered, `Z_FOK_<n>INVERSE_<NAME>`. Stores Graft wrote before it
    /// followed Core Data's layout keep every owner there.
    func ownersJoinTable(entity: Int, relationship: Int) -> JoinTable {
        let description = model.descriptions[entity].relationships[relationship]
        let number = entityNumbers[entity]
        let name = description.name.uppercased()
        return JoinTable(
            name: "Z_\(number)" + name, entity: entity, relationship: relationship,
            sourceColumn: "Z_\(number)INVERSE_" + name,
            destinationColumn: "Z_\(entityNumbers[description.destinationIndex])" + name,
            sourceOrderColumn: description.isOrdered ? "Z_FOK_\(number)INVERSE_" + name : nil,
            destinationOrderColumn: nil, inverse: nil)
    }
}
