//! samconfig.toml against template.yaml: `sam build && sam deploy` need no more flags, and
//! the parameter overrides spelled out there are the template's defaults (the policy the
//! other checks verified).

use aws_model::stack::STACK_NAME;
use deploy_checks::template::{samconfig_path, RepoTemplate, Template};

fn samconfig() -> toml::Table {
    let path = samconfig_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    text.parse().unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn get<'a>(table: &'a toml::Table, path: &[&str]) -> &'a toml::Value {
    let (last, parents) = path.split_last().unwrap();
    let mut t = table;
    for key in parents {
        t = t
            .get(*key)
            .and_then(toml::Value::as_table)
            .unwrap_or_else(|| panic!("samconfig.toml: no table {}", path.join(".")));
    }
    t.get(*last)
        .unwrap_or_else(|| panic!("samconfig.toml: no {}", path.join(".")))
}

/// `Key=Value` or `Key="value with spaces"`, as SAM CLI reads each list item.
fn split_override(item: &str) -> (&str, &str) {
    let (k, v) = item
        .split_once('=')
        .unwrap_or_else(|| panic!("parameter override {item:?} is not Key=Value"));
    let v = v.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(v);
    assert!(
        !v.contains(' ') || item.ends_with('"'),
        "{item:?}: a value with spaces needs double quotes, or SAM CLI splits it"
    );
    (k, v)
}

#[test]
fn build_and_deploy_need_no_flags() {
    let c = samconfig();
    assert_eq!(get(&c, &["version"]).as_float(), Some(0.1));
    let base = ["default", "global", "parameters", "stack_name"];
    assert_eq!(get(&c, &base).as_str(), Some(STACK_NAME));
    // rust-cargolambda is a beta feature of SAM CLI.
    assert_eq!(
        get(&c, &["default", "build", "parameters", "beta_features"]).as_bool(),
        Some(true)
    );
    // SAM's build cache hashes CodeUri alone; crates/core changes would reuse stale binaries.
    assert_eq!(
        get(&c, &["default", "build", "parameters", "cached"]).as_bool(),
        Some(false)
    );
    let deploy = |key: &str| get(&c, &["default", "deploy", "parameters", key]);
    // Unnamed roles, and the AWS::LanguageExtensions transform (a macro) the template declares.
    let capabilities = deploy("capabilities").as_str().unwrap().to_owned();
    let transforms = Template::load().transforms();
    assert!(capabilities.contains("CAPABILITY_IAM"), "{capabilities}");
    assert_eq!(
        capabilities.contains("CAPABILITY_AUTO_EXPAND"),
        transforms.iter().any(|t| t == "AWS::LanguageExtensions"),
        "{capabilities} for transforms {transforms:?}"
    );
    assert_eq!(deploy("resolve_s3").as_bool(), Some(true));
    assert!(deploy("region").as_str().is_some_and(|r| !r.is_empty()));
    assert_eq!(deploy("confirm_changeset").as_bool(), Some(true));
    assert_eq!(
        get(&c, &["default", "validate", "parameters", "lint"]).as_bool(),
        Some(true)
    );
}

#[test]
fn parameter_overrides_are_the_template_defaults() {
    let c = samconfig();
    let defaults = Template::load().parameter_defaults().unwrap();
    let items = get(&c, &["default", "deploy", "parameters", "parameter_overrides"])
        .as_array()
        .expect("parameter_overrides as a list of \"Key=Value\"");
    assert!(!items.is_empty());
    for item in items {
        let (key, value) = split_override(item.as_str().expect("a string"));
        let default = defaults
            .get(key)
            .unwrap_or_else(|| panic!("samconfig.toml overrides {key}, which template.yaml does not have"));
        assert_eq!(
            value, default,
            "{key}: samconfig.toml and template.yaml's Default differ"
        );
    }
}
