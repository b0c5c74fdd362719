//! Tool schemas every client can take. schemars writes an `Option<T>` as `"type": [T,
//! "null"]` and a free JSON value as a schema with no assertion at all; both are legal
//! JSON Schema, but clients that map tool schemas onto a single-`type` dialect (Gemini's
//! OpenAPI subset, strict function calling) reject or weaken them, and the MCP Inspector's
//! `--strict` lint reports them. [`portable`] rewrites a schema in place:
//!
//! - a `type` array becomes `anyOf` branches with one `type` each, every assertion moved
//!   to the branches of the types it applies to (`enum` values split by type), the
//!   annotations (`description`, `default`, …) kept where they were;
//! - a schema that asserts nothing becomes an `anyOf` of the six JSON types: it still
//!   accepts any value, and now says so.
//!
//! The contract does not change: every value valid before is valid after, and no other.

use serde_json::{Map, Value, json};

/// The JSON types, in the order the any-value `anyOf` lists them.
const TYPES: [&str; 6] = ["string", "number", "boolean", "object", "array", "null"];

/// Keywords that assert something of an instance (after the Inspector's own list).
const ASSERTING: &[&str] = &[
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "format",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "items",
    "prefixItems",
    "contains",
    "additionalItems",
    "unevaluatedItems",
    "properties",
    "patternProperties",
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "dependentSchemas",
    "$ref",
    "$dynamicRef",
];

/// The types an assertion keyword applies to (empty: it is not type-specific).
fn applies_to(keyword: &str) -> &'static [&'static str] {
    match keyword {
        "minLength" | "maxLength" | "pattern" | "contentEncoding" | "contentMediaType" | "contentSchema" => &["string"],
        "format" => &["string", "integer", "number"],
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => &["integer", "number"],
        "items" | "prefixItems" | "minItems" | "maxItems" | "uniqueItems" | "contains" | "minContains"
        | "maxContains" | "additionalItems" | "unevaluatedItems" => &["array"],
        "properties"
        | "required"
        | "additionalProperties"
        | "patternProperties"
        | "minProperties"
        | "maxProperties"
        | "propertyNames"
        | "dependentRequired"
        | "dependentSchemas"
        | "unevaluatedProperties" => &["object"],
        _ => &[],
    }
}

/// Whether JSON value `v` is of JSON Schema type `t`.
fn is_of(v: &Value, t: &str) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "string" => v.is_string(),
        "integer" => v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "number" => v.is_number(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => false,
    }
}

/// Rewrite `schema` and every schema inside it (see the module doc).
pub fn portable(schema: &mut Map<String, Value>) {
    for (key, v) in schema.iter_mut() {
        match (key.as_str(), v) {
            ("properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas", Value::Object(m)) => {
                m.values_mut().for_each(portable_value)
            }
            ("anyOf" | "oneOf" | "allOf" | "prefixItems" | "items", Value::Array(a)) => {
                a.iter_mut().for_each(portable_value)
            }
            (
                "items"
                | "additionalProperties"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "unevaluatedProperties"
                | "additionalItems"
                | "unevaluatedItems"
                | "contentSchema",
                v @ Value::Object(_),
            ) => portable_value(v),
            _ => {}
        }
    }
    if let Some(Value::Array(types)) = schema.get("type")
        && !types.is_empty()
        && types.iter().all(Value::is_string)
    {
        let types: Vec<String> = types.iter().filter_map(|t| t.as_str().map(str::to_string)).collect();
        split_types(schema, &types);
    } else if !schema.keys().any(|k| ASSERTING.contains(&k.as_str()))
        && !(schema.contains_key("if") && (schema.contains_key("then") || schema.contains_key("else")))
    {
        schema.insert("anyOf".into(), Value::Array(TYPES.iter().map(|t| json!({"type": t})).collect()));
    }
}

fn portable_value(v: &mut Value) {
    if let Value::Object(m) = v {
        portable(m);
    }
}

/// `"type": [A, B, …]` → `"anyOf": [{"type": A, …}, {"type": B, …}]`, each branch taking
/// the assertions of its type.
fn split_types(schema: &mut Map<String, Value>, types: &[String]) {
    schema.remove("type");
    let taken: Vec<(String, Value)> = schema
        .keys()
        .filter(|k| !applies_to(k).is_empty() || *k == "enum" || *k == "const")
        .cloned()
        .collect::<Vec<_>>()
        .into_iter()
        .filter_map(|k| schema.remove(&k).map(|v| (k, v)))
        .collect();
    let mut branches = Vec::new();
    for t in types {
        let mut b = Map::new();
        b.insert("type".into(), json!(t));
        for (k, v) in &taken {
            match k.as_str() {
                "enum" => {
                    let of: Vec<Value> = v.as_array().into_iter().flatten().filter(|x| is_of(x, t)).cloned().collect();
                    if of.is_empty() {
                        continue;
                    }
                    // `null` alone needs no enum.
                    if t != "null" {
                        b.insert("enum".into(), Value::Array(of));
                    }
                }
                "const" if is_of(v, t) => drop(b.insert("const".into(), v.clone())),
                "const" => {}
                _ if applies_to(k).contains(&t.as_str()) => drop(b.insert(k.clone(), v.clone())),
                _ => {}
            }
        }
        // A type the enum or const ruled out entirely is no branch at all.
        let ruled_out = taken.iter().any(|(k, v)| match k.as_str() {
            "enum" => !v.as_array().is_some_and(|a| a.iter().any(|x| is_of(x, t))),
            "const" => !is_of(v, t),
            _ => false,
        });
        if !ruled_out {
            branches.push(Value::Object(b));
        }
    }
    schema.insert("anyOf".into(), Value::Array(branches));
}

/// [`portable`] for a tool's input and output schemas.
pub fn portable_tool(tool: &mut rmcp::model::Tool) {
    let mut input = tool.input_schema.as_ref().clone();
    portable(&mut input);
    tool.input_schema = std::sync::Arc::new(input);
    if let Some(out) = &tool.output_schema {
        let mut out = out.as_ref().clone();
        portable(&mut out);
        tool.output_schema = Some(std::sync::Arc::new(out));
    }
}

/// Where a server type keeps its portable router ([`cached_router`]).
pub type RouterCell<S> = std::sync::OnceLock<rmcp::handler::server::router::tool::ToolRouter<S>>;

/// The portable router of server type `S`, built once per process into `cell` and cloned
/// for each server made: building it rewrites every tool's schemas, and a server is made
/// for each new session and for each sessionless request.
pub fn cached_router<S: Send + Sync + 'static>(
    cell: &'static RouterCell<S>,
    build: impl FnOnce() -> rmcp::handler::server::router::tool::ToolRouter<S>,
) -> rmcp::handler::server::router::tool::ToolRouter<S> {
    cell.get_or_init(|| portable_router(build())).clone()
}

/// [`portable_tool`] for every tool of a router (once, when a server is made).
pub fn portable_router<S>(
    mut router: rmcp::handler::server::router::tool::ToolRouter<S>,
) -> rmcp::handler::server::router::tool::ToolRouter<S> {
    router.map.values_mut().for_each(|r| portable_tool(&mut r.attr));
    router
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(v: Value) -> Value {
        let mut m = v.as_object().unwrap().clone();
        portable(&mut m);
        Value::Object(m)
    }

    #[test]
    fn a_nullable_type_becomes_branches_with_their_own_assertions() {
        let got = fix(json!({"type": "object", "properties": {
            "limit": {"type": ["integer", "null"], "format": "uint32", "minimum": 0, "description": "at most"},
            "tags": {"type": ["array", "null"], "items": {"type": "string"}},
            "mode": {"type": ["string", "null"], "enum": ["a", "b", null]},
            "id": {"type": ["string", "integer"]}
        }}));
        assert_eq!(
            got["properties"]["limit"],
            json!({"description": "at most", "anyOf": [{"type": "integer", "format": "uint32", "minimum": 0}, {"type": "null"}]})
        );
        assert_eq!(
            got["properties"]["tags"],
            json!({"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]})
        );
        assert_eq!(
            got["properties"]["mode"],
            json!({"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}]})
        );
        assert_eq!(got["properties"]["id"], json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}));
        assert_eq!(got["type"], "object", "a single type is left alone");
    }

    #[test]
    fn a_schema_that_asserts_nothing_says_it_takes_any_value() {
        let got = fix(json!({"type": "object", "properties": {"value": {"description": "any JSON"}, "flag": true}}));
        assert_eq!(got["properties"]["value"]["description"], "any JSON");
        let any: Vec<&str> = got["properties"]["value"]["anyOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["type"].as_str().unwrap())
            .collect();
        assert_eq!(any, TYPES);
        assert_eq!(got["properties"]["flag"], true, "a boolean schema is not an object to rewrite");
    }

    #[test]
    fn nested_schemas_are_rewritten_and_a_property_named_like_a_keyword_is_a_name() {
        let got = fix(json!({"type": "object", "properties": {
            "type": {"type": ["string", "null"]},
            "items": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": ["number", "null"]}}}}
        }, "$defs": {"D": {"type": ["boolean", "null"]}}}));
        assert_eq!(got["properties"]["type"], json!({"anyOf": [{"type": "string"}, {"type": "null"}]}));
        assert_eq!(
            got["properties"]["items"]["items"]["properties"]["n"],
            json!({"anyOf": [{"type": "number"}, {"type": "null"}]})
        );
        assert_eq!(got["$defs"]["D"], json!({"anyOf": [{"type": "boolean"}, {"type": "null"}]}));
    }

    /// Rewritten schemas accept exactly what the originals accept, over a set of values of
    /// every type, checked by a JSON Schema validator nobody here wrote.
    #[test]
    fn the_contract_does_not_change() {
        let originals = [
            json!({"type": ["integer", "null"], "minimum": 1}),
            json!({"type": ["string", "null"], "enum": ["a", null], "description": "d"}),
            json!({"type": ["string", "integer"], "minLength": 2, "maximum": 5}),
            json!({"type": ["array", "null"], "items": {"type": ["string", "null"]}, "maxItems": 2}),
            json!({"type": ["object", "null"], "properties": {"a": {"type": ["boolean", "null"]}}, "required": ["a"]}),
            json!({"description": "anything"}),
        ];
        let values = [
            json!(null),
            json!(0),
            json!(1),
            json!(7),
            json!(2.5),
            json!("a"),
            json!("ab"),
            json!("abc"),
            json!(true),
            json!([]),
            json!(["x", null]),
            json!(["x", 1]),
            json!(["a", "b", "c"]),
            json!({}),
            json!({"a": true}),
            json!({"a": null}),
            json!({"a": 1}),
        ];
        for original in originals {
            let rewritten = fix(original.clone());
            let (before, after) =
                (jsonschema::validator_for(&original).unwrap(), jsonschema::validator_for(&rewritten).unwrap());
            for v in &values {
                assert_eq!(before.is_valid(v), after.is_valid(v), "{original} vs {rewritten} on {v}");
            }
        }
    }
}
