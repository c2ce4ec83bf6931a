//! Application Auto Scaling's DeregisterScalableTarget as AWS runs it: the target goes with
//! every scaling policy and every scheduled action on it ([`DELETED_WITH_TARGET`]), whoever
//! made them; an object is on a target when its resource id and dimension are the target's,
//! exactly ([`on_target`]; moto matches resource ids by substring, and deletes nothing with a
//! target). fake-aws's targets hold their policies and scheduled actions, so deregistering one
//! drops both kinds; testkit's proxy deletes each kind on moto after its DeregisterScalableTarget.

/// One kind of object Application Auto Scaling attaches to a scalable target, and its calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attached {
    /// The call that lists them on a target.
    pub describe: &'static str,
    /// The list in that call's answer.
    pub list: &'static str,
    /// Each object's name field, in the answer and in the delete call.
    pub name: &'static str,
    /// The call that deletes one.
    pub delete: &'static str,
}

impl Attached {
    /// Scaling policies.
    pub const POLICIES: Attached = Attached {
        describe: "DescribeScalingPolicies",
        list: "ScalingPolicies",
        name: "PolicyName",
        delete: "DeleteScalingPolicy",
    };
    /// Scheduled actions.
    pub const SCHEDULED_ACTIONS: Attached = Attached {
        describe: "DescribeScheduledActions",
        list: "ScheduledActions",
        name: "ScheduledActionName",
        delete: "DeleteScheduledAction",
    };
}

/// What DeregisterScalableTarget deletes along with the target: every object of each kind.
pub const DELETED_WITH_TARGET: [Attached; 2] = [Attached::POLICIES, Attached::SCHEDULED_ACTIONS];

/// Whether an object on (`resource_id`, `dimension`) is on the target (`target_resource_id`,
/// `target_dimension`): both the same, exactly.
pub fn on_target(
    resource_id: &str,
    dimension: &str,
    target_resource_id: &str,
    target_dimension: &str,
) -> bool {
    resource_id == target_resource_id && dimension == target_dimension
}

/// ObjectNotFoundException's message for DeregisterScalableTarget of a target that is not
/// registered.
pub fn no_target(resource_id: &str, dimension: &str) -> String {
    format!(
        "No scalable target found for service namespace: dynamodb, resource ID: {resource_id}, scalable dimension: {dimension}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_takes_its_policies_and_scheduled_actions_and_only_its_own() {
        let deleted: Vec<&str> = DELETED_WITH_TARGET.iter().map(|a| a.delete).collect();
        assert_eq!(deleted, ["DeleteScalingPolicy", "DeleteScheduledAction"]);
        let read = "dynamodb:table:ReadCapacityUnits";
        assert!(on_target("table/t", read, "table/t", read));
        assert!(
            !on_target("table/t2", read, "table/t", read),
            "no substring match"
        );
        assert!(!on_target(
            "table/t",
            "dynamodb:table:WriteCapacityUnits",
            "table/t",
            read
        ));
        assert!(no_target("table/t", read).contains("resource ID: table/t"));
    }
}
