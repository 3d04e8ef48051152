import sys
from distributed import Client
from dask_cuda import LocalCUDACluster
import numloom, numloom.dask
from numloom.tools.bench_dask import transfer_probe

def staging(on):
    import numloom.dask
    numloom.dask.IPC_STAGING = on

if __name__ == "__main__":
    for pool in [None, "4GB"]:
        cluster = LocalCUDACluster(protocol="ucx", rmm_pool_size=pool, dashboard_address=":0", silence_logs=50)
        client = Client(cluster)
        for on in [False, True]:
            client.run(staging, on)
            for nbytes in [80 * 2**20, 400 * 2**20]:
                print(f"pool {pool} staging {on}:", transfer_probe(client, nbytes), flush=True)
        client.close(); cluster.close()
