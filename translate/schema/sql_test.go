package schema_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lakegate/lakegate/translate/schema"
)

// Every primitive as Spark's DDL names it (type_text) and as UC's
// ColumnTypeName names its family (type_name).
func TestSQLAndTypeNamePrimitives(t *testing.T) {
	for _, tc := range []struct {
		typ       schema.DataType
		sql, name string
	}{
		{schema.String, "string", "STRING"},
		{schema.Long, "bigint", "LONG"},
		{schema.Integer, "int", "INT"},
		{schema.Short, "smallint", "SHORT"},
		{schema.Byte, "tinyint", "BYTE"},
		{schema.Float, "float", "FLOAT"},
		{schema.Double, "double", "DOUBLE"},
		{schema.Boolean, "boolean", "BOOLEAN"},
		{schema.Binary, "binary", "BINARY"},
		{schema.Date, "date", "DATE"},
		{schema.Timestamp, "timestamp", "TIMESTAMP"},
		{schema.TimestampNtz, "timestamp_ntz", "TIMESTAMP_NTZ"},
		{schema.Void, "void", "NULL"},
		{schema.Variant, "variant", "VARIANT"},
		{schema.DecimalType{Precision: 10, Scale: 2}, "decimal(10,2)", "DECIMAL"},
		{schema.DecimalType{Precision: 38, Scale: 0}, "decimal(38,0)", "DECIMAL"},
	} {
		assert.Equal(t, tc.sql, schema.SQL(tc.typ), "%v", tc.typ)
		assert.Equal(t, tc.name, schema.TypeName(tc.typ), "%v", tc.typ)
	}
}

func field(name string, typ schema.DataType) schema.StructField {
	return schema.StructField{Name: name, Type: typ, Nullable: true}
}

// Nested types render their parts as SQL too, with struct field names
// backquoted where they are not plain identifiers (a backquote inside is
// doubled), as Spark's DataType.fromDDL reads them back.
func TestSQLNested(t *testing.T) {
	for _, tc := range []struct {
		typ       schema.DataType
		sql, name string
	}{
		{schema.ArrayType{ElementType: schema.Long, ContainsNull: true}, "array<bigint>", "ARRAY"},
		{schema.ArrayType{ElementType: schema.ArrayType{ElementType: schema.Short}}, "array<array<smallint>>", "ARRAY"},
		{schema.MapType{KeyType: schema.String, ValueType: schema.Integer}, "map<string,int>", "MAP"},
		{schema.MapType{KeyType: schema.Byte, ValueType: schema.DecimalType{Precision: 5, Scale: 1}}, "map<tinyint,decimal(5,1)>", "MAP"},
		{schema.StructType{Fields: []schema.StructField{field("a", schema.Integer), field("b", schema.String)}},
			"struct<a:int,b:string>", "STRUCT"},
		{schema.StructType{}, "struct<>", "STRUCT"},
		{schema.StructType{Fields: []schema.StructField{
			field("id", schema.Long),
			field("inner", schema.StructType{Fields: []schema.StructField{
				field("at", schema.TimestampNtz),
				field("tags", schema.ArrayType{ElementType: schema.String}),
			}}),
			field("attrs", schema.MapType{KeyType: schema.String, ValueType: schema.StructType{Fields: []schema.StructField{
				field("n", schema.Short),
			}}}),
		}}, "struct<id:bigint,inner:struct<at:timestamp_ntz,tags:array<string>>,attrs:map<string,struct<n:smallint>>>", "STRUCT"},
		{schema.ArrayType{ElementType: schema.StructType{Fields: []schema.StructField{field("x y", schema.Date)}}},
			"array<struct<`x y`:date>>", "ARRAY"},
	} {
		assert.Equal(t, tc.sql, schema.SQL(tc.typ))
		assert.Equal(t, tc.name, schema.TypeName(tc.typ))
	}
}

func TestSQLQuotesFieldNames(t *testing.T) {
	for name, want := range map[string]string{
		"plain":        "plain",
		"_under_9":     "_under_9",
		"CamelCase":    "CamelCase",
		"with space":   "`with space`",
		"back`tick":    "`back``tick`",
		"`":            "````",
		"1st":          "`1st`",
		"9":            "`9`",
		"a.b":          "`a.b`",
		"a-b":          "`a-b`",
		"a:b":          "`a:b`",
		"a,b":          "`a,b`",
		"a<b>":         "`a<b>`",
		"é":            "`é`",
		"":             "``",
		"line\nbreak":  "`line\nbreak`",
		"trailing ":    "`trailing `",
		"tab\tinside":  "`tab\tinside`",
		"x_1_y_2_z_3_": "x_1_y_2_z_3_",
	} {
		st := schema.StructType{Fields: []schema.StructField{field(name, schema.Integer)}}
		assert.Equal(t, "struct<"+want+":int>", schema.SQL(st), "%q", name)
	}
}
