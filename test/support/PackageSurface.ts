/**
 * The package's public surface as a consumer sees it (issue 18): the declarations `tsc` emits for
 * the entries `package.json` exports, the closure of declaration files a consumer's compiler loads
 * from them, and a consumer package type-checked against them. Pure helpers over file texts where
 * possible, so the checks can be fed broken input.
 */
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { promisify } from "node:util"

const run = promisify(execFile)

/** One `exports` entry: subpath (`"."`, `"./sqlite"`, …) → its `types` and `default` targets. */
export interface ExportEntry {
  readonly subpath: string
  readonly types: string
  readonly default: string
}

/** The `exports` map of a `package.json` text. */
export const exportsOf = (packageJson: string): ReadonlyArray<ExportEntry> => {
  const parsed = JSON.parse(packageJson) as { readonly exports?: Record<string, { types: string; default: string }> }
  return Object.entries(parsed.exports ?? {}).map(([subpath, target]) => ({ subpath, types: target.types, default: target.default }))
}

/** The source file (`src/…ts`) an `exports` target (`./dist/…js` or `.d.ts`) is built from. */
export const sourceOf = (target: string): string => target.replace(/^\.\/dist\//, "src/").replace(/\.d\.ts$|\.js$/, ".ts")

const specifiers = /(?:from\s+|import\s*\(\s*|import\s+)["']([^"']+)["']/g

/** The relative module specifiers a declaration text imports or re-exports. */
export const relativeImports = (text: string): ReadonlyArray<string> =>
  [...text.matchAll(specifiers)].map((m) => m[1] as string).filter((s) => s.startsWith("."))

/**
 * Every declaration file a consumer's compiler loads from `entries` (paths relative to `root`,
 * following relative imports), each with the file that first pulled it in; `read` gives a file's
 * text or `undefined` when it does not exist.
 */
export const closure = (
  entries: ReadonlyArray<string>,
  read: (path: string) => string | undefined
): ReadonlyMap<string, string> => {
  const seen = new Map<string, string>()
  const queue: Array<readonly [string, string]> = entries.map((e) => [e, "(entry)"] as const)
  while (queue.length > 0) {
    const [file, from] = queue.shift() as readonly [string, string]
    if (seen.has(file)) continue
    const text = read(file)
    if (text === undefined) continue
    seen.set(file, from)
    for (const spec of relativeImports(text)) {
      queue.push([Path.posix.join(Path.posix.dirname(file), spec.replace(/\.js$/, ".d.ts")), file])
    }
  }
  return seen
}

/** The declaration files of `closure` under an `internal/` folder, each as "file (imported by …)". */
export const internalLeaks = (loaded: ReadonlyMap<string, string>): ReadonlyArray<string> =>
  [...loaded].filter(([file]) => file.split("/").includes("internal")).map(([file, from]) => `${file} (imported by ${from})`)

/** The TypeScript compiler of this repository, as `node <tsc>` arguments. */
export const tscArgs = (repo: string): ReadonlyArray<string> => [Path.join(repo, "node_modules/typescript/lib/tsc.js")]

/** Runs `tsc -p <project>`; resolves with its exit status and output. */
export const tsc = async (repo: string, project: string): Promise<{ readonly ok: boolean; readonly output: string }> => {
  try {
    const { stdout } = await run(process.execPath, [...tscArgs(repo), "-p", project], { cwd: Path.dirname(project), maxBuffer: 16 << 20 })
    return { ok: true, output: stdout }
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string }
    return { ok: false, output: `${e.stdout ?? ""}${e.stderr ?? ""}` }
  }
}

/**
 * Emits the declarations of every exported entry of `repo` into `<dir>/dist` and writes
 * `<dir>/package.json` (the repository's) and `<dir>/node_modules` (a link to the repository's):
 * `dir` is then the package as a consumer installs it, types only.
 */
export const emitPackage = async (repo: string, dir: string): Promise<{ readonly ok: boolean; readonly output: string }> => {
  const packageJson = Fs.readFileSync(Path.join(repo, "package.json"), "utf8")
  const entries = exportsOf(packageJson)
  const config = {
    extends: Path.join(repo, "tsconfig.base.json"),
    compilerOptions: {
      rootDir: Path.join(repo, "src"),
      outDir: Path.join(dir, "dist"),
      emitDeclarationOnly: true,
      declarationMap: false,
      sourceMap: false,
      typeRoots: [Path.join(repo, "node_modules/@types")],
      plugins: []
    },
    files: [...new Set(entries.map((e) => Path.join(repo, sourceOf(e.types))))]
  }
  const project = Path.join(dir, "tsconfig.emit.json")
  Fs.writeFileSync(project, JSON.stringify(config, null, 2))
  Fs.writeFileSync(Path.join(dir, "package.json"), packageJson)
  Fs.symlinkSync(Path.join(repo, "node_modules"), Path.join(dir, "node_modules"), "dir")
  return tsc(repo, project)
}

/** Copies the fixture package `fixture` to `<dir>/consumer`, with `effect-harness` linked to `pkg`. */
export const installFixture = (repo: string, fixture: string, dir: string, pkg: string): string => {
  const consumer = Path.join(dir, "consumer")
  Fs.cpSync(fixture, consumer, { recursive: true })
  const modules = Path.join(consumer, "node_modules")
  Fs.mkdirSync(modules)
  Fs.symlinkSync(pkg, Path.join(modules, "effect-harness"), "dir")
  Fs.symlinkSync(Path.join(repo, "node_modules/effect"), Path.join(modules, "effect"), "dir")
  Fs.symlinkSync(Path.join(repo, "node_modules/@types"), Path.join(modules, "@types"), "dir")
  return consumer
}
