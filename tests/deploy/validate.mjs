// Validates the deployment files against their published schemas (make deploy-check):
//
//   node tests/deploy/validate.mjs            (from the repository root)
//
// - Every object of deploy/k8s/*.yaml, and the ConfigMap kustomization.yaml
//   generates from router-nginx.conf, against the Kubernetes OpenAPI schemas
//   (kubernetes-models: types, required fields, enums, formats, int-or-string).
//   These schemas, like the API server's, allow unknown fields: a misspelt
//   field passes here, which is why check_manifests.py asserts the fields
//   that matter (probes, securityContext, resources) by name.
// - deploy/compose.yml against the compose-spec JSON schema (the copy dclint
//   ships, validated with ajv), which forbids unknown keys.
// Before that, each validator must reject a known-bad object, so a validator
// that accepts everything fails the run instead of passing it.
// Exit status 0 when every file is valid, 1 otherwise.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..");
const require = createRequire(join(here, "package.json"));
const YAML = require("yaml");
const Ajv = require("ajv");

let failures = 0;
function fail(what) {
  failures++;
  console.log("FAIL: " + what);
}

function loadAll(rel) {
  const text = readFileSync(join(repo, rel), "utf8");
  // merge: the "<<" keys of YAML 1.1, which compose files use (x-shard).
  const docs = YAML.parseAllDocuments(text, { merge: true });
  for (const d of docs) if (d.errors.length) fail(`${rel}: YAML: ${d.errors[0].message}`);
  return docs.map((d) => d.toJS()).filter((d) => d);
}

// kubernetes-models/<group>/<version>/<Kind>; the core group is "v1".
function k8sModel(obj) {
  try {
    return require(`kubernetes-models/${obj.apiVersion}/${obj.kind}`)[obj.kind];
  } catch {
    return null;
  }
}

function k8sErrors(obj) {
  const Model = k8sModel(obj);
  if (!Model) return [`no schema for ${obj.apiVersion} ${obj.kind}`];
  try {
    new Model(obj).validate();
    return [];
  } catch (e) {
    return [e.message];
  }
}

// Self-tests: a validator that accepts these is not validating.
function selfTest(compose) {
  const bad = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "x" },
    spec: {
      selector: { matchLabels: { a: "b" } },
      template: { spec: { containers: [{ name: "c", securityContext: { runAsUser: "101" } }] } },
    },
  };
  if (k8sErrors(bad).length === 0) fail("self-test: kubernetes-models accepted runAsUser as a string");
  if (k8sErrors({ apiVersion: "v1", kind: "Service", metadata: { name: "s" }, spec: { ports: [{ port: "http" }] } }).length === 0)
    fail("self-test: kubernetes-models accepted a Service port that is not a number");
  if (compose({ services: { a: { image: "x", healthcheck: { tset: ["CMD", "true"] } } } }))
    fail("self-test: the compose schema accepted an unknown key (healthcheck.tset)");
  if (compose({ services: { a: { image: "x", depends_on: { b: { condition: "service_ready" } } } } }))
    fail("self-test: the compose schema accepted depends_on condition service_ready");
}

function main() {
  // Not in dclint's exports map: read from the installed package's folder.
  const schema = JSON.parse(readFileSync(join(here, "node_modules/dclint/schemas/compose.schema.json"), "utf8"));
  // It names draft-07 by an https URI, which ajv does not know by that name;
  // ajv's default dialect is draft-07 itself.
  if (!/draft-07/.test(schema.$schema)) fail(`compose schema: unexpected dialect ${schema.$schema}`);
  delete schema.$schema;
  const ajv = new Ajv({ allErrors: true, strict: false, logger: false });
  const compose = ajv.compile(schema);
  selfTest(compose);

  let objects = 0;
  for (const rel of ["deploy/k8s/collisiond.yaml", "deploy/k8s/router.yaml"]) {
    for (const obj of loadAll(rel)) {
      objects++;
      for (const e of k8sErrors(obj)) fail(`${rel}: ${obj.kind} ${obj.metadata?.name}: ${e}`);
    }
  }
  // What kustomize makes of configMapGenerator (the name gets a hash suffix).
  const [kust] = loadAll("deploy/k8s/kustomization.yaml");
  for (const gen of kust.configMapGenerator || []) {
    const data = {};
    for (const f of gen.files) {
      const [key, file] = f.includes("=") ? f.split("=") : [f, f];
      data[key] = readFileSync(join(repo, "deploy/k8s", file), "utf8");
    }
    objects++;
    const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: gen.name }, data };
    for (const e of k8sErrors(cm)) fail(`kustomization.yaml: ConfigMap ${gen.name}: ${e}`);
  }
  console.log(`kubernetes: ${objects} objects checked against the Kubernetes OpenAPI schemas`);

  const [doc] = loadAll("deploy/compose.yml");
  if (!compose(doc))
    for (const e of compose.errors) fail(`deploy/compose.yml: ${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`);
  console.log(`compose: deploy/compose.yml checked against the compose-spec schema (${schema.title})`);

  console.log(failures ? `validate: ${failures} failures` : "validate: all files valid");
  process.exit(failures ? 1 : 0);
}

main();
