//! The family's ledger (issue 37) as the stack makes it: `LedgerTable` named by the engine's rule
//! (`{prefix}_ledger`, which the functions derive from their prefix instead of reading it from
//! their environment) with the settings the ledger spec asks for, and both roles, for every
//! combination of the optional parameters: (a) may use their own ledger's items, (b) may not
//! change the ledger table itself, nor any ledger of a family nested in theirs, though it lies
//! inside their `table/{prefix}_*` grants, and (c) may not reach another family's ledger.

use std::collections::{BTreeMap, BTreeSet};

use aws_model::iam::{glob_match, tags, Decision, Request, Tags};
use aws_model::role::Role;
use aws_model::stack::table_arn;
use aws_model::template::Value;
use ddb_rollover::policy::Ownership;
use ddb_rollover::policy::TAG_FAMILY;
use deploy_checks::features::combinations;
use deploy_checks::ledger::{
    is_write, ledger_name, ledger_tags, LEDGER_ACTIONS, LEDGER_DENIED, UNUSED_ITEM_ACTIONS,
};
use deploy_checks::template::{RepoTemplate, Template};

const LEDGER: &str = "LedgerTable";
/// The Deny statement that keeps the roles off the ledger tables.
const KEEP_LEDGERS: &str = "KeepLedgers";
/// TablePrefix's default.
const PREFIX: &str = "timeseries";
/// A family whose prefix nests in ours: its tables, and its ledger, match `table/timeseries_*`.
const NESTED: &str = "timeseries_eu";

fn template(overrides: &[(&str, &str)]) -> Template {
    let mut template = Template::load();
    template
        .set_parameters(overrides)
        .unwrap_or_else(|e| panic!("{e}"));
    template
}

/// Each function's role with these overrides, as (function, role).
fn roles(overrides: &[(&str, &str)]) -> Vec<(String, Role)> {
    let template = template(overrides);
    template
        .functions()
        .unwrap_or_else(|e| panic!("template.yaml with {overrides:?}: {e}"))
        .into_iter()
        .map(|f| {
            let role = Role::of_function(&template, &f.logical_id)
                .unwrap_or_else(|e| panic!("{} with {overrides:?}: {e}", f.logical_id));
            (f.logical_id, role)
        })
        .collect()
}

fn property<'t>(template: &'t Template, key: &str) -> &'t Value {
    template
        .resource(LEDGER)
        .and_then(|r| r.get("Properties"))
        .and_then(|p| p.get(key))
        .unwrap_or_else(|| panic!("{LEDGER}: no Properties.{key}"))
}

/// A list of mappings (KeySchema, Tags, ...) with every value resolved.
fn records(template: &Template, key: &str) -> Vec<BTreeMap<String, String>> {
    property(template, key)
        .as_sequence()
        .unwrap_or_else(|| panic!("{LEDGER}.{key} is not a list"))
        .iter()
        .map(|item| {
            item.as_mapping()
                .unwrap_or_else(|| panic!("{LEDGER}.{key}: {item:?} is not a mapping"))
                .iter()
                .map(|(k, v)| {
                    let k = k.as_str().unwrap_or_default().to_owned();
                    let v = template
                        .resolve(v)
                        .unwrap_or_else(|e| panic!("{LEDGER}.{key}.{k}: {e}"));
                    (k, v)
                })
                .collect()
        })
        .collect()
}

fn record(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// (d) The table's name is the engine's rule for the stack's prefix, whatever the prefix; it is
/// not a period's name under any Period; no function is told it (one fact: the rule). Then the
/// spec's settings: key, on-demand, point-in-time recovery, deletion protection, encryption,
/// tags, kept when the stack goes, and made by every stack.
#[test]
fn the_ledger_table_is_named_by_the_engines_rule_and_made_as_the_spec_says() {
    for prefix in [PREFIX, NESTED, "a.b-c", "x"] {
        for period in ["hour", "day", "week", "month", "quarter", "year"] {
            let t = template(&[("TablePrefix", prefix), ("Period", period)]);
            let name = ledger_name(prefix);
            assert_eq!(
                t.resolve(property(&t, "TableName")).unwrap(),
                name,
                "{LEDGER}.TableName with TablePrefix={prefix}"
            );
            // What the stack reports (`!Ref LedgerTable`).
            let output = t
                .section("Outputs")
                .into_iter()
                .find(|(id, _)| id == "LedgerTableName")
                .and_then(|(_, o)| o.get("Value").map(|v| t.resolve(v).unwrap()));
            assert_eq!(output.as_deref(), Some(name.as_str()), "Outputs.LedgerTableName");
            for f in t.functions().unwrap() {
                let policy = f.policy().unwrap();
                assert!(
                    !matches!(policy.naming().classify(&name), Ownership::Owned(_)),
                    "{name} reads as a period's table of {}'s policy (Period={period})",
                    f.logical_id
                );
                for (variable, value) in &f.environment {
                    assert!(
                        !value.contains(&name),
                        "{}: {variable} carries the ledger's name; the functions derive it from the prefix",
                        f.logical_id
                    );
                }
            }
        }
    }

    let t = Template::load();
    let ledger = t.resource(LEDGER).expect("a LedgerTable resource");
    let get = |key: &str| ledger.get(key).and_then(Value::as_str);
    assert_eq!(get("Type"), Some("AWS::DynamoDB::Table"));
    assert_eq!(get("DeletionPolicy"), Some("Retain"));
    assert_eq!(get("UpdateReplacePolicy"), Some("Retain"));
    assert!(ledger.get("Condition").is_none(), "every stack has its ledger");
    assert_eq!(
        records(&t, "KeySchema"),
        [
            record(&[("AttributeName", "family"), ("KeyType", "HASH")]),
            record(&[("AttributeName", "record"), ("KeyType", "RANGE")]),
        ]
    );
    assert_eq!(
        records(&t, "AttributeDefinitions"),
        [
            record(&[("AttributeName", "family"), ("AttributeType", "S")]),
            record(&[("AttributeName", "record"), ("AttributeType", "S")]),
        ]
    );
    let text = |key: &str| t.resolve(property(&t, key)).unwrap();
    assert_eq!(text("BillingMode"), "PAY_PER_REQUEST");
    assert_eq!(text("DeletionProtectionEnabled"), "true");
    let nested = |key: &str, field: &str| {
        property(&t, key)
            .get(field)
            .map(|v| t.resolve(v).unwrap())
            .unwrap_or_else(|| panic!("{LEDGER}.{key}.{field}"))
    };
    assert_eq!(
        nested("PointInTimeRecoverySpecification", "PointInTimeRecoveryEnabled"),
        "true"
    );
    assert_eq!(nested("SSESpecification", "SSEEnabled"), "true");
    let tags: Tags = records(&t, "Tags")
        .into_iter()
        .map(|tag| (tag["Key"].clone(), tag["Value"].clone()))
        .collect();
    assert_eq!(tags, ledger_tags(PREFIX));
    let eu = template(&[("TablePrefix", NESTED)]);
    assert_eq!(records(&eu, "Tags")[0]["Value"], NESTED);
}

/// A request on `table` carrying `resource_tags`, writing our family tag where it writes tags.
fn on(action: &str, table: &str, resource_tags: &Tags) -> Request {
    Request::new(action, &table_arn(table))
        .with_resource_tags(resource_tags.clone())
        .with_request_tags(tags(&[(TAG_FAMILY, PREFIX)]))
}

/// (a) Each function may make the ledger's calls on its own ledger, tagged or not (the grant is
/// its ARN, not its tags), and no other item call.
#[test]
fn each_function_may_query_and_write_its_own_ledger() {
    let ledger = ledger_name(PREFIX);
    for overrides in combinations() {
        for (function, role) in roles(&overrides) {
            for table_tags in [ledger_tags(PREFIX), Tags::new()] {
                for action in LEDGER_ACTIONS {
                    let decision = role.decide(&on(action, &ledger, &table_tags));
                    assert!(
                        decision.is_allowed(),
                        "{function} with {overrides:?}: {action} on {ledger} ({table_tags:?}): {decision:?}"
                    );
                }
                for action in UNUSED_ITEM_ACTIONS {
                    assert!(
                        !role.allows(&on(action, &ledger, &table_tags)),
                        "{function} with {overrides:?}: {action} on {ledger}"
                    );
                }
            }
        }
    }
}

/// (b) No function may create, change, tag, seal, export or delete its ledger table: each
/// denied action explicitly, and every changing action any Allow statement grants on a pattern
/// the ledger matches (`table/{prefix}_*`) is among them. The Deny reaches no period table.
#[test]
fn no_function_may_change_its_ledger_table() {
    let ledger = ledger_name(PREFIX);
    let arn = table_arn(&ledger);
    for overrides in combinations() {
        for (function, role) in roles(&overrides) {
            let what = format!("{function} with {overrides:?}");
            for action in LEDGER_DENIED {
                for table_tags in [ledger_tags(PREFIX), Tags::new()] {
                    assert_eq!(
                        role.decide(&on(action, &ledger, &table_tags)),
                        Decision::ExplicitDeny(KEEP_LEDGERS.into()),
                        "{what}: {action} on {ledger} ({table_tags:?})"
                    );
                }
            }
            // Whatever the role is granted on the prefix's tables reaches the ledger but for
            // the Deny: every such write must be denied there. (Actions on `*` take no table
            // resource: CreateEventSourceMapping, the scalable targets' reads.)
            let granted: BTreeSet<&str> = role
                .statements
                .iter()
                .filter(|s| {
                    s.effect == "Allow" && s.resources.iter().any(|r| r != "*" && glob_match(r, &arn))
                })
                .flat_map(|s| s.actions.iter().map(String::as_str))
                .filter(|a| a.starts_with("dynamodb:") && is_write(a) && !LEDGER_ACTIONS.contains(a))
                .collect();
            assert!(granted.contains("dynamodb:UpdateTable"), "{what}: {granted:?}");
            for action in granted {
                assert_eq!(
                    role.decide(&on(action, &ledger, &ledger_tags(PREFIX))),
                    Decision::ExplicitDeny(KEEP_LEDGERS.into()),
                    "{what}: {action} is granted on the prefix's tables, so on {ledger} too: \
                     add it to {KEEP_LEDGERS}"
                );
            }
            // Period tables, ours or a nested family's, are not ledgers.
            for (table, family) in [
                ("timeseries_2018-10-25", PREFIX),
                ("timeseries_eu_2018-10-25", NESTED),
                ("timeseries_ledger_2018-10-25", "timeseries_ledger"),
            ] {
                for action in LEDGER_DENIED {
                    let decision = role.decide(&on(action, table, &tags(&[(TAG_FAMILY, family)])));
                    assert!(
                        !matches!(decision, Decision::ExplicitDeny(_)),
                        "{what}: {action} on {table}: {decision:?}"
                    );
                }
            }
        }
    }
}

/// (c) No function may read or write another family's ledger: a nested family's
/// (`timeseries_eu_ledger`, inside `table/timeseries_*`, whose table is also denied to us), one
/// beside the prefix, ours in another Region or account; and the nested family's own stack may
/// not reach ours (outside `table/timeseries_eu_*`). Each stack still uses its own.
#[test]
fn no_function_may_reach_another_familys_ledger() {
    let nested = ledger_name(NESTED);
    for overrides in combinations() {
        for (function, role) in roles(&overrides) {
            let what = format!("{function} with {overrides:?}");
            for table_tags in [ledger_tags(NESTED), Tags::new()] {
                for action in LEDGER_ACTIONS.iter().chain(&UNUSED_ITEM_ACTIONS) {
                    if *action == "dynamodb:DescribeTable" {
                        continue;
                    }
                    assert!(
                        !role.allows(&on(action, &nested, &table_tags)),
                        "{what}: {action} on {nested} ({table_tags:?})"
                    );
                }
                for action in LEDGER_DENIED {
                    assert_eq!(
                        role.decide(&on(action, &nested, &table_tags)),
                        Decision::ExplicitDeny(KEEP_LEDGERS.into()),
                        "{what}: {action} on {nested} ({table_tags:?})"
                    );
                }
            }
            for arn in [
                table_arn("other_ledger"),
                table_arn("timeseriesX_ledger"),
                table_arn("timeseries"),
                "arn:aws:dynamodb:eu-west-1:123456789012:table/timeseries_ledger".to_owned(),
                "arn:aws:dynamodb:us-east-1:210987654321:table/timeseries_ledger".to_owned(),
            ] {
                for action in LEDGER_ACTIONS {
                    let request = Request::new(action, &arn).with_resource_tags(ledger_tags(PREFIX));
                    assert!(!role.allows(&request), "{what}: {action} on {arn}");
                }
            }
        }
    }
    // The nested family's stack: its own ledger only.
    let ours = ledger_name(PREFIX);
    for (function, role) in roles(&[("TablePrefix", NESTED)]) {
        for action in LEDGER_ACTIONS {
            assert!(
                role.allows(&on(action, &nested, &ledger_tags(NESTED))),
                "{function} of {NESTED}: {action} on {nested}"
            );
            assert!(
                !role.allows(&on(action, &ours, &ledger_tags(PREFIX))),
                "{function} of {NESTED}: {action} on {ours}"
            );
        }
        for action in LEDGER_DENIED {
            assert_eq!(
                role.decide(&on(action, &nested, &ledger_tags(NESTED))),
                Decision::ExplicitDeny(KEEP_LEDGERS.into()),
                "{function} of {NESTED}: {action} on {nested}"
            );
        }
    }
}
