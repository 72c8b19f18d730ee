// Reads the OpenAPI document strictly with ajv: every schema must compile under ajv's strict mode
// (OpenAPI 3.0's schemas are JSON Schema draft 4 with nullable), and every answer recorded by the
// contract tests must be valid against its operation's schema.
//
//   node strict.mjs openapi.json [answers.json]
//
// answers.json is a list of {method, path, status, body}: path is the document's path template,
// body the answer's JSON. Prints a JSON report and exits 1 when anything failed.
import { readFileSync } from "node:fs";
import Ajv from "ajv-draft-04";
import addFormats from "ajv-formats";

const [documentFile, answersFile] = process.argv.slice(2);
const doc = JSON.parse(readFileSync(documentFile, "utf8"));
const answers = answersFile ? JSON.parse(readFileSync(answersFile, "utf8")) : [];

const ajv = new Ajv({ strict: true, allErrors: true });
addFormats(ajv, ["date-time", "uri", "email"]);
// OpenAPI's own formats: int32 bounds an integer; password only tells tools to hide the value.
ajv.addFormat("int32", { type: "number", validate: (n) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
ajv.addFormat("password", () => true);
// The document's own keywords, and OpenAPI's annotations within schemas, which validate nothing.
// (discriminator is a hint to code generators: the oneOf it annotates decides alone.)
ajv.addVocabulary(["openapi", "info", "servers", "paths", "components", "tags", "security", "externalDocs", "example", "discriminator"]);
const base = "openapi.json";
ajv.addSchema(doc, base);

const escape = (token) => token.replaceAll("~", "~0").replaceAll("/", "~1");
const failures = [];
let compiled = 0;
const compile = (pointer) => {
  try {
    compiled++;
    return ajv.compile({ $ref: `${base}#${pointer}` });
  } catch (err) {
    failures.push({ schema: pointer, error: String(err.message ?? err) });
    return null;
  }
};

// Every component schema, and every schema written in line in a parameter, body or answer.
for (const name of Object.keys(doc.components?.schemas ?? {})) compile(`/components/schemas/${escape(name)}`);
const jsonContent = (content) => Object.keys(content ?? {}).filter((type) => type.includes("json"));
for (const [path, item] of Object.entries(doc.paths)) {
  for (const [method, operation] of Object.entries(item)) {
    if (typeof operation !== "object" || !operation.responses) continue;
    const at = `/paths/${escape(path)}/${method}`;
    (operation.parameters ?? []).forEach((p, i) => p.schema && compile(`${at}/parameters/${i}/schema`));
    for (const type of jsonContent(operation.requestBody?.content)) compile(`${at}/requestBody/content/${escape(type)}/schema`);
    for (const [status, response] of Object.entries(operation.responses)) {
      if (response.$ref) continue; // a component, compiled below
      for (const type of jsonContent(response.content)) compile(`${at}/responses/${status}/content/${escape(type)}/schema`);
    }
  }
}
for (const [name, response] of Object.entries(doc.components?.responses ?? {})) {
  for (const type of jsonContent(response.content)) compile(`/components/responses/${escape(name)}/content/${escape(type)}/schema`);
}
// A parameter's or header's schema is compiled as a copy whose references name the document: a
// reference through components/parameters would read its parameter named "id" as draft 4's id.
const absolute = (value) =>
  Array.isArray(value) ? value.map(absolute)
  : value && typeof value === "object"
    ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === "$ref" && v.startsWith("#") ? base + v : absolute(v)]))
    : value;
for (const kind of ["parameters", "headers"]) {
  for (const [name, component] of Object.entries(doc.components?.[kind] ?? {})) {
    if (!component.schema) continue;
    compiled++;
    try {
      ajv.compile(absolute(component.schema));
    } catch (err) {
      failures.push({ schema: `/components/${kind}/${escape(name)}/schema`, error: String(err.message ?? err) });
    }
  }
}

// Each answer against the schema of its operation's status (or default).
const validators = new Map();
let checked = 0;
for (const answer of answers) {
  const operation = doc.paths[answer.path]?.[answer.method.toLowerCase()];
  const status = operation?.responses?.[String(answer.status)] ? String(answer.status) : "default";
  let response = operation?.responses?.[status];
  let pointer = `/paths/${escape(answer.path)}/${answer.method.toLowerCase()}/responses/${status}`;
  if (response?.$ref) {
    pointer = response.$ref.slice(1);
    response = doc.components.responses[response.$ref.split("/").pop()];
  }
  const type = jsonContent(response?.content)[0];
  if (!type) continue; // no body documented: nothing to validate
  pointer += `/content/${escape(type)}/schema`;
  if (!validators.has(pointer)) validators.set(pointer, compile(pointer));
  const validate = validators.get(pointer);
  if (!validate) continue;
  checked++;
  if (!validate(answer.body)) {
    failures.push({ answer: `${answer.method} ${answer.path} ${answer.status}`, errors: validate.errors.slice(0, 5), body: JSON.stringify(answer.body).slice(0, 300) });
  }
}

console.log(JSON.stringify({ compiled, checked, failures }, null, 1));
process.exit(failures.length ? 1 : 0);
