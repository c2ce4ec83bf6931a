//! `template.yaml` as the checks need it: the repository's template (read and resolved by
//! [`aws_model::template`]) and the functions SAM makes of it, with their binaries,
//! environments, schedules and roles.

use std::collections::BTreeMap;
use std::path::PathBuf;

pub use aws_model::template::Template;
use aws_model::template::Value;
use ddb_rollover::{Operation, Policy};
use ddb_rollover_stack::grants::Grants;
use ddb_rollover_stack::parameters::StackParameters;
use ddb_rollover_stack::InitError;

/// What EventBridge Scheduler replaces with the schedule's own invocation time.
pub const SCHEDULED_TIME_PLACEHOLDER: &str = "<aws.scheduler.scheduled-time>";

/// `template.yaml` at the repository root.
pub fn template_path() -> PathBuf {
    testkit::repo_root().join("template.yaml")
}

/// `samconfig.toml` at the repository root.
pub fn samconfig_path() -> PathBuf {
    testkit::repo_root().join("samconfig.toml")
}

/// One `AWS::Serverless::Function`.
#[derive(Clone, Debug)]
pub struct Function {
    /// The resource's logical id, e.g. `CreateNewFunction`.
    pub logical_id: String,
    /// The cargo binary `sam build` packages: `Metadata.BuildProperties.Binary`, or else the
    /// package's at `CodeUri` (its name).
    pub binary: String,
    /// The package directory `sam build` builds.
    pub code_uri: String,
    /// Logical id of the `AWS::IAM::Role` named by `Role: !GetAtt X.Arn`, if any.
    pub role: Option<String>,
    /// `Globals.Function.Environment` merged with the function's own, resolved.
    pub environment: BTreeMap<String, String>,
    /// Its `ScheduleV2` events.
    pub schedules: Vec<Schedule>,
}

/// One `ScheduleV2` event of a function.
#[derive(Clone, Debug)]
pub struct Schedule {
    /// The event's name under the function's `Events`.
    pub event: String,
    /// `ScheduleExpression`, e.g. `cron(45 23 * * ? *)`.
    pub expression: String,
    /// `ScheduleExpressionTimezone`, if set.
    pub timezone: Option<String>,
    /// The `Input` string as Scheduler gets it, placeholders not yet substituted.
    pub input: String,
    /// Whether Scheduler runs it: `State` ENABLED, its default when absent.
    pub enabled: bool,
}

impl Function {
    /// The operation the function's binary serves: `create-new` is `create_new`.
    pub fn operation(&self) -> Option<Operation> {
        [Operation::CreateNew, Operation::ResizeOld]
            .into_iter()
            .find(|op| op.as_str().replace('_', "-") == self.binary)
    }

    /// The policy the function builds at its cold start from this environment: the same
    /// code ([`ddb_rollover_stack::policy_from_variables`]), so `ROLLOVER_POLICY` (the
    /// `PolicyOverride`) or the stack's parameters, one variable each.
    pub fn policy(&self) -> Result<Policy, InitError> {
        ddb_rollover_stack::policy_from_variables(|name| self.environment.get(name).cloned())
    }

    /// What the function's cold start takes its role to be granted (`None`: no stack
    /// parameters in the environment, nothing is checked).
    pub fn grants(&self) -> Option<Grants> {
        StackParameters::from_lookup(|name| self.environment.get(name).cloned()).map(|stack| stack.grants())
    }
}

/// The environment variables template.yaml gives one function (its logical id, e.g.
/// `CreateNewFunction`, or its binary, `create-new`) for a stack with these parameters (the
/// rest at their defaults): what a release check runs a bootstrap with.
pub fn function_environment(
    parameters: &[(&str, &str)],
    function: &str,
) -> Result<BTreeMap<String, String>, String> {
    let mut template = Template::read(&template_path())?;
    template.set_parameters(parameters)?;
    template
        .functions()?
        .into_iter()
        .find(|f| f.logical_id == function || f.binary == function)
        .map(|f| f.environment)
        .ok_or_else(|| format!("no function {function} in the template"))
}

/// The repository's `template.yaml` and the functions SAM makes of it.
pub trait RepoTemplate: Sized {
    /// Reads and parses `template.yaml`, with the parameters' defaults. Panics with the reason.
    fn load() -> Self;

    /// Every `AWS::Serverless::Function`, with Globals applied.
    fn functions(&self) -> Result<Vec<Function>, String>;
}

impl RepoTemplate for Template {
    fn load() -> Template {
        Template::read(&template_path()).unwrap_or_else(|e| panic!("{e}"))
    }

    fn functions(&self) -> Result<Vec<Function>, String> {
        let globals = self
            .get("Globals")
            .and_then(|g| g.get("Function"))
            .cloned()
            .unwrap_or(Value::Null);
        let mut out = Vec::new();
        for (id, resource) in self.resources_of_type("AWS::Serverless::Function") {
            let props = resource.get("Properties").unwrap_or(&Value::Null);
            let code_uri = props
                .get("CodeUri")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{id}: CodeUri is not a path"))?
                .to_owned();
            // sam build (rust-cargolambda) packages the one binary of the package at CodeUri,
            // unless Metadata.BuildProperties.Binary picks one of several.
            let binary = match resource
                .get("Metadata")
                .and_then(|m| m.get("BuildProperties"))
                .and_then(|b| b.get("Binary"))
            {
                Some(binary) => binary
                    .as_str()
                    .ok_or_else(|| format!("{id}: Metadata.BuildProperties.Binary is not a string"))?
                    .to_owned(),
                None => package_name(&code_uri).map_err(|e| format!("{id}: {e}"))?,
            };
            let role = self.function_role(&id)?;

            let mut environment = BTreeMap::new();
            for source in [&globals, props] {
                if let Some(Value::Mapping(vars)) = source.get("Environment").and_then(|e| e.get("Variables"))
                {
                    for (k, v) in vars {
                        let k = k
                            .as_str()
                            .ok_or_else(|| format!("{id}: environment key is not a string"))?;
                        // A variable whose `Fn::If` chose `AWS::NoValue` is not set.
                        let v = self
                            .resolve_structure(v)
                            .and_then(|v| v.map(|v| self.resolve(&v)).transpose())
                            .map_err(|e| format!("{id}: environment {k}: {e}"))?;
                        if let Some(v) = v {
                            environment.insert(k.to_owned(), v);
                        }
                    }
                }
            }

            let mut schedules = Vec::new();
            if let Some(Value::Mapping(events)) = props.get("Events") {
                for (name, event) in events {
                    let name = name.as_str().unwrap_or_default().to_owned();
                    if event.get("Type").and_then(Value::as_str) != Some("ScheduleV2") {
                        continue;
                    }
                    let p = event.get("Properties").unwrap_or(&Value::Null);
                    let field = |key: &str| -> Result<Option<String>, String> {
                        p.get(key)
                            .map(|v| self.resolve(v))
                            .transpose()
                            .map_err(|e| format!("{id}.{name}.{key}: {e}"))
                    };
                    schedules.push(Schedule {
                        expression: field("ScheduleExpression")?
                            .ok_or_else(|| format!("{id}.{name}: no ScheduleExpression"))?,
                        timezone: field("ScheduleExpressionTimezone")?,
                        input: field("Input")?.ok_or_else(|| format!("{id}.{name}: no Input"))?,
                        enabled: match field("State")?.as_deref() {
                            None | Some("ENABLED") => true,
                            Some("DISABLED") => false,
                            Some(other) => {
                                return Err(format!(
                                    "{id}.{name}.State: {other} is neither ENABLED nor DISABLED"
                                ))
                            }
                        },
                        event: name,
                    });
                }
            }
            out.push(Function {
                logical_id: id,
                binary,
                code_uri,
                role,
                environment,
                schedules,
            });
        }
        Ok(out)
    }
}

/// `!Ref AWS::NoValue` or `{Ref: AWS::NoValue}`.
/// The `[package] name` of the Cargo.toml in `code_uri` (relative to the repository root): the
/// binary of a package that has one, `src/main.rs`.
fn package_name(code_uri: &str) -> Result<String, String> {
    let path = testkit::repo_root().join(code_uri).join("Cargo.toml");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("CodeUri {code_uri}: read {}: {e}", path.display()))?;
    let manifest: toml::Table = text.parse().map_err(|e| format!("{}: {e}", path.display()))?;
    manifest
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(toml::Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("{}: no [package] name", path.display()))
}
