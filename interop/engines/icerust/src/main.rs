//! icerust: iceberg-rust (crates `iceberg` + `iceberg-catalog-rest`) driving
//! a REST catalog, one operation per run, for interop/engines/test_engines.py.
//!
//!   icerust create NS TABLE            namespace (when missing) and table (id long, name string)
//!   icerust append NS TABLE ROWS       ROWS: a JSON array of objects keyed by column name
//!   icerust scan NS TABLE [SNAPSHOT]   prints the rows (at SNAPSHOT: time travel) as a JSON array
//!   icerust add-column NS TABLE NAME   schema evolution: an optional string column
//!   icerust drop NS TABLE
//!
//! NS is dot-separated (`a.b` is two levels). The catalog comes from the
//! environment: ICEBERG_URI, ICEBERG_WAREHOUSE and, for OAuth2 client
//! credentials, ICEBERG_CREDENTIAL (`id:secret`, exchanged at
//! {uri}/v1/oauth/tokens). Files are read and written on the local file
//! system (`file:` locations): the suite's warehouses are local folders.
//! Errors go to stderr with exit status 1.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::DataType;
use futures::TryStreamExt;
use iceberg::arrow::schema_to_arrow_schema;
use iceberg::io::LocalFsStorageFactory;
use iceberg::spec::{DataFileFormat, NestedField, PrimitiveType, Schema, Type};
use iceberg::table::Table;
use iceberg::transaction::{AddColumn, ApplyTransactionAction, Transaction};
use iceberg::writer::base_writer::data_file_writer::DataFileWriterBuilder;
use iceberg::writer::file_writer::location_generator::{
    DefaultFileNameGenerator, DefaultLocationGenerator,
};
use iceberg::writer::file_writer::rolling_writer::RollingFileWriterBuilder;
use iceberg::writer::file_writer::ParquetWriterBuilder;
use iceberg::writer::{IcebergWriter, IcebergWriterBuilder};
use iceberg::{Catalog, CatalogBuilder, NamespaceIdent, TableCreation, TableIdent};
use iceberg_catalog_rest::{RestCatalog, RestCatalogBuilder};
use parquet::file::properties::WriterProperties;
use serde_json::{json, Map, Value};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(e) = run(&args).await {
        eprintln!(
            "icerust {}: {e}",
            args.first().map(String::as_str).unwrap_or("")
        );
        std::process::exit(1);
    }
}

async fn run(args: &[String]) -> Res<()> {
    let (cmd, ns, table) = match args {
        [cmd, ns, table, ..] => (cmd.as_str(), namespace(ns)?, table.as_str()),
        _ => return Err(usage()),
    };
    let rest = &args[3..];
    let catalog = connect().await?;
    let ident = TableIdent::new(ns.clone(), table.to_string());
    match (cmd, rest) {
        ("create", []) => create(&catalog, &ns, table).await,
        ("append", [rows]) => append(&catalog, &ident, rows).await,
        ("scan", []) => scan(&catalog, &ident, None).await,
        ("scan", [snapshot]) => scan(&catalog, &ident, Some(snapshot.parse()?)).await,
        ("add-column", [name]) => add_column(&catalog, &ident, name).await,
        ("drop", []) => Ok(catalog.drop_table(&ident).await?),
        _ => Err(usage()),
    }
}

fn usage() -> Box<dyn std::error::Error> {
    "usage: icerust create|append ROWS|scan [SNAPSHOT]|add-column NAME|drop NS TABLE".into()
}

fn namespace(dotted: &str) -> Res<NamespaceIdent> {
    Ok(NamespaceIdent::from_strs(dotted.split('.'))?)
}

/// The REST catalog of the environment, with local-file-system FileIO.
async fn connect() -> Res<RestCatalog> {
    let mut props = HashMap::new();
    for (var, prop) in [
        ("ICEBERG_URI", "uri"),
        ("ICEBERG_WAREHOUSE", "warehouse"),
        ("ICEBERG_CREDENTIAL", "credential"),
    ] {
        if let Ok(v) = std::env::var(var) {
            props.insert(prop.to_string(), v);
        }
    }
    if !props.contains_key("uri") {
        return Err("ICEBERG_URI is not set".into());
    }
    let catalog = RestCatalogBuilder::default()
        .with_storage_factory(Arc::new(LocalFsStorageFactory))
        .load("lakegate", props)
        .await?;
    Ok(catalog)
}

async fn create(catalog: &RestCatalog, ns: &NamespaceIdent, table: &str) -> Res<()> {
    if !catalog.namespace_exists(ns).await? {
        catalog.create_namespace(ns, HashMap::new()).await?;
    }
    let schema = Schema::builder()
        .with_fields(vec![
            NestedField::optional(1, "id", Type::Primitive(PrimitiveType::Long)).into(),
            NestedField::optional(2, "name", Type::Primitive(PrimitiveType::String)).into(),
        ])
        .build()?;
    let creation = TableCreation::builder()
        .name(table.to_string())
        .schema(schema)
        .build();
    catalog.create_table(ns, creation).await?;
    Ok(())
}

/// Writes ROWS as one Parquet file and commits it with a fast append;
/// prints the new snapshot's id.
async fn append(catalog: &RestCatalog, ident: &TableIdent, rows: &str) -> Res<()> {
    let rows: Vec<Map<String, Value>> = serde_json::from_str(rows)?;
    let table = catalog.load_table(ident).await?;
    let batch = record_batch(&table, &rows)?;
    let meta = table.metadata();
    let rolling = RollingFileWriterBuilder::new_with_default_file_size(
        ParquetWriterBuilder::new(WriterProperties::default(), meta.current_schema().clone()),
        table.file_io().clone(),
        DefaultLocationGenerator::new(meta)?,
        // A name no earlier run used: the generator only counts within one.
        DefaultFileNameGenerator::new(
            format!("icerust-{}", uuid::Uuid::now_v7()),
            None,
            DataFileFormat::Parquet,
        ),
    );
    let mut writer = DataFileWriterBuilder::new(rolling).build(None).await?;
    writer.write(batch).await?;
    let files = writer.close().await?;
    let tx = Transaction::new(&table);
    let tx = tx.fast_append().add_data_files(files).apply(tx)?;
    let table = tx.commit(catalog).await?;
    let id = table
        .metadata()
        .current_snapshot()
        .map(|s| s.snapshot_id())
        .ok_or("the append left no current snapshot")?;
    println!("{}", json!({ "snapshot_id": id }));
    Ok(())
}

/// The rows as an Arrow batch of the table's current schema (with its field
/// ids, which the Parquet writer needs); a column a row leaves out is null.
fn record_batch(table: &Table, rows: &[Map<String, Value>]) -> Res<RecordBatch> {
    let arrow = Arc::new(schema_to_arrow_schema(table.metadata().current_schema())?);
    let mut columns: Vec<ArrayRef> = Vec::new();
    for field in arrow.fields() {
        let values: Vec<&Value> = rows
            .iter()
            .map(|r| r.get(field.name()).unwrap_or(&Value::Null))
            .collect();
        columns.push(column(field.name(), field.data_type(), &values)?);
    }
    Ok(RecordBatch::try_new(arrow, columns)?)
}

fn column(name: &str, ty: &DataType, values: &[&Value]) -> Res<ArrayRef> {
    let bad = |v: &Value| format!("column {name} ({ty}): cannot take {v}");
    let mut check = Ok(());
    let mut take = |v: &Value, got: Option<()>| {
        if got.is_none() && !v.is_null() && check.is_ok() {
            check = Err(bad(v));
        }
    };
    let array: ArrayRef = match ty {
        DataType::Int64 => Arc::new(Int64Array::from_iter(values.iter().map(|v| {
            take(v, v.as_i64().map(|_| ()));
            v.as_i64()
        }))),
        DataType::Int32 => Arc::new(Int32Array::from_iter(values.iter().map(|v| {
            let x = v.as_i64().and_then(|x| i32::try_from(x).ok());
            take(v, x.map(|_| ()));
            x
        }))),
        DataType::Float64 => Arc::new(Float64Array::from_iter(values.iter().map(|v| {
            take(v, v.as_f64().map(|_| ()));
            v.as_f64()
        }))),
        DataType::Boolean => Arc::new(BooleanArray::from_iter(values.iter().map(|v| {
            take(v, v.as_bool().map(|_| ()));
            v.as_bool()
        }))),
        DataType::Utf8 => Arc::new(StringArray::from_iter(values.iter().map(|v| {
            take(v, v.as_str().map(|_| ()));
            v.as_str()
        }))),
        _ => return Err(format!("column {name}: type {ty} is not supported by icerust").into()),
    };
    check?;
    Ok(array)
}

/// Prints every row of the table (at SNAPSHOT when given) as a JSON array.
async fn scan(catalog: &RestCatalog, ident: &TableIdent, snapshot: Option<i64>) -> Res<()> {
    let table = catalog.load_table(ident).await?;
    let mut builder = table.scan().select_all();
    if let Some(id) = snapshot {
        builder = builder.snapshot_id(id);
    }
    let batches: Vec<RecordBatch> = builder.build()?.to_arrow().await?.try_collect().await?;
    let mut rows = Vec::new();
    for batch in &batches {
        rows.extend(batch_rows(batch)?);
    }
    println!("{}", Value::Array(rows));
    Ok(())
}

/// One JSON object per row: integers, floats and booleans as JSON values,
/// nulls as null, anything else as Arrow's display string.
fn batch_rows(batch: &RecordBatch) -> Res<Vec<Value>> {
    let opts = FormatOptions::default();
    let mut rows = vec![Map::new(); batch.num_rows()];
    for (field, col) in batch.schema().fields().iter().zip(batch.columns()) {
        let text = ArrayFormatter::try_new(col.as_ref(), &opts)?;
        for (i, row) in rows.iter_mut().enumerate() {
            let v = if col.is_null(i) {
                Value::Null
            } else {
                let s = text.value(i).to_string();
                match field.data_type() {
                    DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
                        Value::from(s.parse::<i64>()?)
                    }
                    DataType::Float32 | DataType::Float64 => Value::from(s.parse::<f64>()?),
                    DataType::Boolean => Value::from(s.parse::<bool>()?),
                    _ => Value::from(s),
                }
            };
            row.insert(field.name().clone(), v);
        }
    }
    Ok(rows.into_iter().map(Value::Object).collect())
}

async fn add_column(catalog: &RestCatalog, ident: &TableIdent, name: &str) -> Res<()> {
    let table = catalog.load_table(ident).await?;
    let tx = Transaction::new(&table);
    let tx = tx
        .update_schema()
        .add_column(AddColumn::optional(
            name,
            Type::Primitive(PrimitiveType::String),
        ))
        .apply(tx)?;
    tx.commit(catalog).await?;
    Ok(())
}
