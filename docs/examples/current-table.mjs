// The table to write to now, from the parameter ddb-rollover publishes after each create_new
// run (AWS SDK for JavaScript v3: npm install @aws-sdk/client-ssm).
//
//   node current-table.mjs PREFIX [INSTANT]
//
// The same steps as current_table.py, which the tests run against moto; this one is not run
// by the tests, which install no AWS SDK for JavaScript.
import { SSMClient, GetParameterCommand } from "@aws-sdk/client-ssm";

export async function currentTable(prefix, instant = new Date()) {
  const ssm = new SSMClient({});
  const { Parameter } = await ssm.send(
    new GetParameterCommand({ Name: `/ddb-rollover/${prefix}/tables` }),
  );
  for (const table of JSON.parse(Parameter.Value).tables) {
    const start = new Date(table.start);
    const end = new Date(table.end);
    if (start <= instant && instant < end && table.status === "ACTIVE") {
      return table.table;
    }
  }
  throw new Error(`no ACTIVE table of ${prefix} holds ${instant.toISOString()}`);
}

const [prefix, instant] = process.argv.slice(2);
console.log(await currentTable(prefix, instant ? new Date(instant) : new Date()));
