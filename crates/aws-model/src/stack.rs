//! The imagined stack every check evaluates: its pseudo parameters (`AWS::Region`,
//! `AWS::AccountId`, ...) and the ARNs they make. Below both the template reader and the IAM
//! evaluator, so each names the same account.

/// `AWS::Region`.
pub const REGION: &str = "us-east-1";
/// `AWS::AccountId`.
pub const ACCOUNT_ID: &str = "123456789012";
/// `AWS::Partition`.
pub const PARTITION: &str = "aws";
/// `AWS::StackName`.
pub const STACK_NAME: &str = "ddb-rollover";
/// `AWS::URLSuffix`.
pub const URL_SUFFIX: &str = "amazonaws.com";

/// The pseudo parameters as `(name, value)`, what `!Ref AWS::Region` and `${AWS::AccountId}`
/// resolve to.
pub const PSEUDO_PARAMETERS: [(&str, &str); 5] = [
    ("AWS::Region", REGION),
    ("AWS::AccountId", ACCOUNT_ID),
    ("AWS::Partition", PARTITION),
    ("AWS::StackName", STACK_NAME),
    ("AWS::URLSuffix", URL_SUFFIX),
];

/// `arn:aws:dynamodb:REGION:ACCOUNT:table/NAME` in the imagined stack's Region and account.
pub fn table_arn(table: &str) -> String {
    format!("arn:{PARTITION}:dynamodb:{REGION}:{ACCOUNT_ID}:table/{table}")
}
