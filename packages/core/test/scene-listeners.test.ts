// SceneListenerSet, the listener bookkeeping every store's watchScenes shares.
import { expect, it } from 'vitest'
import { SceneListenerSet } from '@scanauth/core/store'

it('announces the first listener and the last one leaving, once each, and tells the listeners of the moment', () => {
  const events: string[] = []
  const set = new SceneListenerSet({ onFirst: () => events.push('first'), onLast: () => events.push('last') })
  const heard: string[] = []
  const listener = (sceneStr: string) => heard.push(sceneStr)
  const stopA = set.add(listener)
  // The same function twice is two registrations, each stopped on its own.
  const stopB = set.add(listener)
  expect(events).toEqual(['first'])
  set.tell('s1')
  expect(heard).toEqual(['s1', 's1'])
  stopA()
  stopA()
  expect(set.size).toBe(1)
  set.tell('s2')
  expect(heard).toEqual(['s1', 's1', 's2'])
  stopB()
  expect(events).toEqual(['first', 'last'])
  set.tell('s3')
  expect(heard).toEqual(['s1', 's1', 's2'])
})

it('tells the listeners registered when a telling began; one stopped during it hears nothing after', () => {
  const set = new SceneListenerSet()
  const heard: string[] = []
  let stopSecond = () => {}
  set.add(() => {
    heard.push('first')
    stopSecond()
  })
  stopSecond = set.add(() => heard.push('second'))
  set.tell('s')
  // The listeners of the moment the telling began: the second was registered then.
  expect(heard).toEqual(['first', 'second'])
  set.tell('s')
  expect(heard).toEqual(['first', 'second', 'first'])
})

it('clear forgets every listener without announcing the last', () => {
  const events: string[] = []
  const set = new SceneListenerSet({ onLast: () => events.push('last') })
  const stop = set.add(() => {})
  set.clear()
  expect(set.size).toBe(0)
  stop()
  expect(events).toEqual([])
})
