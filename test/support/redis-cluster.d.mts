/** A node of a Redis Cluster on loopback. */
export interface ClusterNodeAddress {
  host: string;
  port: number;
}

/**
 * A Redis Cluster for tests and benches: 6 private `redis-server` processes (3 masters, 3 replicas, AOF on,
 * `cluster-node-timeout` 1 s), or the existing one REDIS_CLUSTER_NODES names (`host:port,host:port,...`).
 */
export interface TestRedisCluster {
  /** Every node given at start (the startup nodes for ioredis's `Cluster`). */
  nodes: ClusterNodeAddress[];
  /** True when REDIS_CLUSTER_NODES names the cluster: `killMaster` and `restart` then throw. */
  external: boolean;
  /** The live masters, as CLUSTER NODES lists them. */
  masters(): Promise<Array<ClusterNodeAddress & { id: string; slots: string[] }>>;
  /** The live replicas, as CLUSTER NODES lists them. */
  replicas(): Promise<Array<ClusterNodeAddress & { id: string; masterId?: string }>>;
  /** The master that owns `key`'s slot now. */
  masterOf(key: string): Promise<ClusterNodeAddress>;
  /**
   * SIGKILLs the master that owns `key`'s slot (the first master without a key), and waits until one of its
   * replicas has taken its slots and every live node says `cluster_state:ok`.
   */
  killMaster(key?: string): Promise<{ killed: ClusterNodeAddress; promoted: ClusterNodeAddress }>;
  /** Starts a killed node again on its port and data (it rejoins as a replica) and waits until all is in sync. */
  restart(node: ClusterNodeAddress): Promise<void>;
  /** Stops every private server and removes its data (no-op for REDIS_CLUSTER_NODES). */
  stop(): Promise<void>;
}

/** Starts the cluster (about 6 s) and waits until every node is ok and every replica in sync. */
export function startRedisCluster(options?: { nodeTimeoutMs?: number }): Promise<TestRedisCluster>;

/** One `redis-cli` command against a node; its output, trimmed. */
export function redisCli(node: ClusterNodeAddress, ...args: string[]): Promise<string>;
