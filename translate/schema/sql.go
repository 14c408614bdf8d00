package schema

import (
	"fmt"
	"regexp"
	"strings"
)

// SQL renders t as Spark SQL names it in DDL (Spark's catalogString, with
// struct field names quoted when they are not plain identifiers), the
// form Unity Catalog's type_text holds and Spark's DataType.fromDDL reads
// back: long is bigint, integer int, short smallint, byte tinyint.
func SQL(t DataType) string {
	switch t := t.(type) {
	case PrimitiveType:
		if s, ok := sqlNames[t]; ok {
			return s
		}
		return string(t)
	case DecimalType:
		return t.String()
	case ArrayType:
		return "array<" + SQL(t.ElementType) + ">"
	case MapType:
		return "map<" + SQL(t.KeyType) + "," + SQL(t.ValueType) + ">"
	case StructType:
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = quoteField(f.Name) + ":" + SQL(f.Type)
		}
		return "struct<" + strings.Join(parts, ",") + ">"
	}
	panic(fmt.Sprintf("schema: unknown data type %T", t))
}

var sqlNames = map[PrimitiveType]string{Long: "bigint", Integer: "int", Short: "smallint", Byte: "tinyint"}

var plainIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func quoteField(name string) string {
	if plainIdent.MatchString(name) {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// TypeName is the type's family as Unity Catalog's ColumnTypeName names it
// (LONG, INT, DECIMAL, STRUCT, ...).
func TypeName(t DataType) string {
	switch t := t.(type) {
	case PrimitiveType:
		if s, ok := typeNames[t]; ok {
			return s
		}
		return strings.ToUpper(string(t))
	case DecimalType:
		return "DECIMAL"
	case ArrayType:
		return "ARRAY"
	case MapType:
		return "MAP"
	case StructType:
		return "STRUCT"
	}
	panic(fmt.Sprintf("schema: unknown data type %T", t))
}

var typeNames = map[PrimitiveType]string{Integer: "INT", Void: "NULL"}
