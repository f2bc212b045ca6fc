/**
 * The test runner of every project (`vitest.shared.ts`): Vitest's own, which also skips the tests
 * needing a part the global setup could not provide (`needs.ts`), with the reason as the skip note,
 * instead of letting them fail with ECONNREFUSED. A skipped file or `describe` runs none of its
 * hooks either (no server to connect to in a beforeAll). With every part present it does nothing.
 */
import { TestRunner, type RunnerTestCase, type RunnerTestSuite } from 'vitest'
import { missingServices, skipReason } from './needs'

const missing = missingServices()
const nothingMissing = Object.keys(missing).length === 0

/** The names of `task` and its enclosing suites (not the file). */
function namesOf(task: RunnerTestCase | RunnerTestSuite): string[] {
  const names: string[] = []
  for (let t: RunnerTestCase | RunnerTestSuite | undefined = task; t && t !== t.file; t = t.suite) names.push(t.name)
  return names
}

/** Drops the hooks of `suite` and of every suite in it. */
function dropHooks(suite: RunnerTestSuite): void {
  for (const hooks of Object.values(TestRunner.getSuiteHooks(suite))) if (Array.isArray(hooks)) hooks.length = 0
  for (const task of suite.tasks) if (task.type === 'suite') dropHooks(task)
}

export default class TestServicesRunner extends TestRunner {
  override async onBeforeRunSuite(suite: RunnerTestSuite): Promise<void> {
    if (!nothingMissing && suite.mode === 'run') {
      const reason = skipReason(missing, suite.file.filepath, suite === suite.file ? undefined : namesOf(suite))
      if (reason !== undefined) dropHooks(suite)
    }
    await super.onBeforeRunSuite(suite)
  }

  override async onBeforeRunTask(test: RunnerTestCase): Promise<void> {
    if (!nothingMissing && test.mode === 'run') {
      const reason = skipReason(missing, test.file.filepath, namesOf(test))
      if (reason !== undefined) {
        test.mode = 'skip'
        // `note` is what ctx.skip(note) records, and reporters show (TaskResult's type lacks it).
        test.result = { state: 'skip', note: reason } as RunnerTestCase['result']
      }
    }
    await super.onBeforeRunTask(test)
  }
}
