/**
 * The Store contract suite of `@scanauth/testkit` against a real Redis (`REDIS_URL`, default
 * redis://127.0.0.1:6379). Each test gets a RedisStore on a key prefix of its own; peers are
 * RedisStores on new ioredis clients with the same prefix; `dump` reads every record straight
 * from Redis; cleanup deletes that prefix's keys (SCAN + DEL, never FLUSHDB) and quits the clients.
 */
import { describeStoreContract } from '@scanauth/testkit'
import { connect, redisHarness } from './support/redis'

describeStoreContract('RedisStore', redisHarness(connect))
