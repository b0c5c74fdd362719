//! `hal0 op NAME [ARGS]`: any operation of the route table by its tool name, run here as
//! the shell's operator with JSON arguments and a JSON answer — the CLI as a generic
//! adapter over `crate::ops`, for scripts. Gated operations run at once: the shell is
//! where a person decides. `hal0 op --list` lists every name with its route.

use super::{Ctx, print_json, table};
use crate::base::error::{Error, Result};
use crate::ops::{Access, ROUTES, op_named};
use serde_json::{Map, Value};

#[derive(Debug, clap::Args)]
pub struct OpArgs {
    /// The operation's tool name (see `hal0 op --list`).
    #[arg(required_unless_present = "list")]
    pub name: Option<String>,
    /// Its arguments as one JSON object, e.g. '{"name":"ci","scopes":["memory"]}'.
    pub args: Option<String>,
    /// List every operation: name, access, REST route.
    #[arg(long, conflicts_with_all = ["name", "args"])]
    pub list: bool,
}

pub fn run(ctx: &Ctx, a: OpArgs) -> Result<()> {
    if a.list {
        let rows = ROUTES
            .iter()
            .filter_map(|r| {
                let access = match r.access {
                    Access::AutonomousRead => "read",
                    Access::AutonomousWrite => "write",
                    Access::Gated => "gated",
                };
                Some(vec![r.tool?.to_string(), access.into(), format!("{} {}", r.method, r.path)])
            })
            .collect();
        println!("{}", table(&["NAME", "ACCESS", "ROUTE"], rows));
        return Ok(());
    }
    let name = a.name.unwrap_or_default();
    // An unknown name is a usage error (exit 2), with the nearest names.
    let op = op_named(&name).ok_or_else(|| {
        let mut near: Vec<(usize, String)> = crate::ops::routes::ROUTES
            .iter()
            .map(|r| r.name().into_owned())
            .map(|n| (crate::base::term::edit_distance(&n, &name), n))
            .filter(|(d, _)| *d <= 3)
            .collect();
        near.sort();
        let hint = match near.first() {
            Some((_, n)) => format!("did you mean `{n}`? "),
            None => String::new(),
        };
        Error::invalid("mcp.unknown_tool", format!("no operation `{name}`: {hint}(see `hal0 op --list`)"))
    })?;
    let args: Map<String, Value> = match a.args.as_deref().map(serde_json::from_str::<Value>) {
        None => Map::new(),
        Some(Ok(Value::Object(m))) => m,
        Some(Ok(_)) => return Err(Error::invalid(op.invalid_code, "the arguments must be one JSON object")),
        Some(Err(e)) => return Err(Error::invalid(op.invalid_code, format!("the arguments are not valid JSON: {e}"))),
    };
    let args = crate::ops::args::check_path_args(op.path, args)?;
    if op.run.is_none() {
        return Err(Error::invalid("mcp.unknown_tool", format!("`{name}` is not an operation")));
    }
    // A change is audited as it is from REST (surface `cli`, the shell user), reads are not.
    let ops = ctx.ops()?;
    print_json(&super::runtime()?.block_on(crate::ops::call::at_shell(ops, &name, Value::Object(args)))?);
    Ok(())
}
