//! Prints the environment `template.yaml` gives each function, resolved for a stack deployed
//! with the parameters' defaults or the `Name=Value` overrides given as arguments (as
//! `sam deploy --parameter-overrides` would take them). scripts/qemu-invoke.sh runs the
//! shipped `bootstrap`s with it, so the release check sees what a deployed stack's functions see.
//!
//! ```text
//! cargo run -q -p deploy-checks --example function-env -- Period=hour Premake=2
//! ```
//!
//! Output: for each function, a line `FUNCTION <LogicalId>`, then one `KEY=VALUE` line per
//! variable. A value holding a newline is refused: the lines could not be read back.

use std::process::ExitCode;

use deploy_checks::template::{RepoTemplate, Template};

fn main() -> ExitCode {
    match run(std::env::args().skip(1)) {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("function-env: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: impl Iterator<Item = String>) -> Result<String, String> {
    let mut template = Template::load();
    for arg in args {
        let (name, value) = arg
            .split_once('=')
            .ok_or_else(|| format!("{arg:?} is not Name=Value"))?;
        if !template.section("Parameters").iter().any(|(n, _)| n == name) {
            return Err(format!("no parameter {name} in template.yaml"));
        }
        template.set_parameter(name, value);
    }
    let functions = template.functions()?;
    if functions.is_empty() {
        return Err("no AWS::Serverless::Function in template.yaml".into());
    }
    let mut out = String::new();
    for function in functions {
        out.push_str(&format!("FUNCTION {}\n", function.logical_id));
        for (key, value) in &function.environment {
            if value.contains('\n') {
                return Err(format!("{}: {key} holds a newline", function.logical_id));
            }
            out.push_str(&format!("{key}={value}\n"));
        }
    }
    Ok(out)
}
