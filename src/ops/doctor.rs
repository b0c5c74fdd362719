//! `hal0 doctor` as an operation: every check's row.

use super::{Ctx, NoArgs};
use crate::error::Result;

/// `doctor_report`: ok / warn / fail rows with a one-line detail each.
pub async fn report(ctx: &Ctx, _: NoArgs) -> Result<serde_json::Value> {
    Ok(crate::doctor::run(&ctx.paths).await.to_json())
}
