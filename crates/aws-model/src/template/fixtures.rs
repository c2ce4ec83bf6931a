//! Small templates the reader's tests share: intrinsics, conditions and roles.

use super::Template;

pub(crate) const SMALL: &str = r#"
Parameters:
  Prefix:
    Type: String
    Default: ts
  Count:
    Type: Number
    Default: 3
Resources:
  Role:
    Type: AWS::IAM::Role
    Properties:
      Policies:
        - PolicyName: p
          PolicyDocument:
            Statement:
              - Effect: Allow
                Action: dynamodb:ListTables
                Resource: "*"
              - Effect: Allow
                Action: [dynamodb:DescribeTable]
                Resource:
                  - !Sub arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${Prefix}_*
                  - Fn::Sub: "${Q.Arn}"
"#;

pub(crate) const WITH_CONDITIONS: &str = r#"
Parameters:
  Prefix:
    Type: String
    Default: ts
  Strict:
    Type: String
    Default: "true"
Conditions:
  IsStrict: !Equals [!Ref Strict, "true"]
Resources:
  Role:
    Type: AWS::IAM::Role
    Properties:
      Policies:
        - PolicyName: p
          PolicyDocument:
            Statement:
              - Sid: Tag
                Effect: Allow
                Action: dynamodb:TagResource
                Resource: "*"
                Condition:
                  StringEqualsIfExists:
                    "aws:ResourceTag/ddb-rollover:family": !Ref Prefix
                    "aws:RequestTag/ddb-rollover:family": [!Ref Prefix, !Sub "${Prefix}-old"]
                  Null:
                    "aws:RequestTag/team": !If [IsStrict, "false", !Ref AWS::NoValue]
  Odd:
    Type: AWS::IAM::Role
    Properties:
      Policies:
        - PolicyName: p
          PolicyDocument:
            Statement:
              - Effect: Allow
                Action: dynamodb:TagResource
                Resource: "*"
                Condition:
                  ForAllValues:StringEquals:
                    aws:TagKeys: [a]
"#;

/// A role granting on a table by `!GetAtt`, with an explicit Deny on it beside an Allow on a
/// pattern that also matches it; a table CloudFormation names itself; two tables whose names
/// refer to each other.
pub(crate) const WITH_TABLES: &str = r#"
Parameters:
  Prefix:
    Type: String
    Default: ts
Resources:
  Ledger:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: !Sub "${Prefix}_ledger"
  Unnamed:
    Type: AWS::DynamoDB::Table
    Properties:
      BillingMode: PAY_PER_REQUEST
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: q
  Ping:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: !Ref Pong
  Pong:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: !Sub "${Ping}-x"
  Role:
    Type: AWS::IAM::Role
    Properties:
      Policies:
        - PolicyName: p
          PolicyDocument:
            Statement:
              - Sid: Tables
                Effect: Allow
                Action: [dynamodb:UpdateTable, dynamodb:DescribeTable]
                Resource: !Sub arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${Prefix}_*
              - Sid: Items
                Effect: Allow
                Action: dynamodb:PutItem
                Resource: !GetAtt Ledger.Arn
              - Sid: KeepLedger
                Effect: Deny
                Action: dynamodb:UpdateTable
                Resource: [!GetAtt Ledger.Arn, !Sub "arn:aws:dynamodb:us-east-1:123456789012:table/${Ledger}/x"]
"#;

pub(crate) const CONDITIONAL: &str = r#"
Parameters:
  Bucket:
    Type: String
    Default: ""
  Days:
    Type: Number
    Default: 0
  Flag:
    Type: String
    Default: "false"
Conditions:
  HasBucket: !Not [!Equals [!Ref Bucket, ""]]
  HasDays: !Not [{"Fn::Equals": [!Ref Days, 0]}]
  FlagOn: !Equals [!Ref Flag, "true"]
  Either: !Or [!Condition HasBucket, {Condition: HasDays}]
  Both: !And [!Condition HasBucket, !Condition HasDays, !Not [!Condition FlagOn]]
  Loop: !Not [!Condition Loop]
Resources:
  Role:
    Type: AWS::IAM::Role
    Properties:
      Policies:
        - PolicyName: always
          PolicyDocument:
            Statement:
              - Sid: Always
                Effect: Allow
                Action: dynamodb:ListTables
                Resource: "*"
              - !If
                - HasDays
                - Sid: Delete
                  Effect: Allow
                  Action: dynamodb:DeleteTable
                  Resource: !Sub arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/x_*
                - !Ref AWS::NoValue
              - Sid: Flagged
                Effect: Allow
                Action: !If [FlagOn, [a:B, a:C], a:B]
                Resource: "*"
        - Fn::If:
            - HasBucket
            - PolicyName: archive
              PolicyDocument:
                Statement:
                  - Sid: Objects
                    Effect: Allow
                    Action: s3:PutObject
                    Resource: !Sub arn:aws:s3:::${Bucket}/*
            - {Ref: AWS::NoValue}
"#;

/// [`CONDITIONAL`] with these parameters overridden.
pub(crate) fn conditional(overrides: &[(&str, &str)]) -> Template {
    let mut t = Template::parse(CONDITIONAL).unwrap();
    for (name, value) in overrides {
        t.set_parameter(name, value);
    }
    t
}
