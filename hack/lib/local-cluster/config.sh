# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Slurm configuration of the local cluster, written to $LC_STATE/etc and
# bound at /etc/slurm in every node, in the controller and in logins.

write_hosts() {
    local n i
    n=$(workers)
    {
        echo "127.0.0.1 localhost"
        echo "$(ctld_addr) ctld"
        echo "$(login_addr) login"
        for ((i = 1; i <= n; i++)); do echo "$(node_addr "$i") $(node_name "$i")"; done
    } >"$1"
}

# The slurm.conf lines of the local cluster and the smoke tests' single node:
# those of every cluster here (hack/lib/slurm-daemons.sh) with chroot.so
# through /etc/slurm/plugstack.conf, plus cores (and memory with
# SLURM_JAIL_LOCAL_CGROUP=yes) as consumable resources.
slurm_conf_base() {
    slurm_conf_common /etc/slurm/plugstack.conf "$LC_SPOOL_DIR"
    echo "SelectTypeParameters=$([ "${LC_CGROUP:-no}" = yes ] && echo CR_Core_Memory || echo CR_Core)"
}

write_slurm_conf() {
    local n i mem=
    n=$(workers)
    # --mem needs memory on the node to ask for.
    if [ -n "$LC_NODE_MEMORY" ]; then
        mem=" RealMemory=$LC_NODE_MEMORY"
    elif [ "$LC_CGROUP" = yes ]; then
        mem=" RealMemory=4096"
    fi
    cat <<CONF
# Written by hack/local-cluster; rewritten on every 'up'.
ClusterName=$LC_CLUSTER
SlurmctldHost=ctld($(ctld_addr))
CONF
    slurm_conf_base
    cat <<CONF
SlurmdUser=root
SchedulerType=$LC_SCHEDULER
SlurmdParameters=config_overrides
KillWait=5
MinJobAge=30
MessageTimeout=20
InactiveLimit=0
StateSaveLocation=$LC_STATE/ctld
SlurmctldPidFile=$LC_STATE/ctld/slurmctld.pid
SlurmdPidFile=$LC_SPOOL_DIR/slurmd.pid
SlurmctldLogFile=$LC_STATE/logs/slurmctld.log
SlurmdLogFile=$LC_STATE/logs/slurmd-%n.log
SlurmdDebug=info
SlurmctldDebug=info
CONF
    # Slurm 23.11 dropped the crypto plugins (credentials are signed by the
    # auth plugin); 22.05 signs them with crypto/munge.
    release_at_least "$(cluster_release)" 23.11 || echo "CryptoType=crypto/munge"
    if [ "$LC_JOB_CONTAINER" = yes ]; then
        # Each job's own namespaces also for what SPANK cannot reach (task
        # prolog/epilog scripts, sbcast, pam_slurm_adopt); an extern step per
        # job. Slurm 25.11 renamed the plugin type to namespace.
        if release_at_least "$(cluster_release)" 25.11; then
            echo "NamespaceType=namespace/slurm_jail"
        else
            echo "JobContainerType=job_container/slurm_jail"
        fi
    fi
    if [ "$LC_CONTAIN" = yes ]; then
        echo "PrologFlags=Contain"
    fi
    for ((i = 1; i <= n; i++)); do
        echo "NodeName=$(node_name "$i") NodeAddr=$(node_addr "$i") CPUs=32${mem} State=UNKNOWN"
    done
    echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
}

write_config() {
    local etc=$LC_STATE/etc
    install -d -m 0755 "$etc" "$LC_STATE/ctld" "$LC_STATE/logs"
    write_slurm_conf >"$etc/slurm.conf"
    # With up --pyxis, chroot.so's line binds pyxis's runtime_path and
    # pyxis's line follows it (pyxis.sh).
    {
        echo "$LC_PLUGSTACK_LINE${LC_PLUGSTACK_EXTRA:+ $LC_PLUGSTACK_EXTRA}$(pyxis_chroot_args)"
        pyxis_plugstack_line
    } >"$etc/plugstack.conf"
    # Read only with task/cgroup; the nodes share the host's cgroup v1 tree.
    printf '%s\n' "# Written by hack/local-cluster." "CgroupPlugin=cgroup/v1" \
        "ConstrainRAMSpace=yes" "ConstrainSwapSpace=yes" >"$etc/cgroup.conf"
    write_hosts "$LC_STATE/hosts"
    write_hosts "$(jail_dir)/etc/hosts"
    chmod 0644 "$etc/slurm.conf" "$etc/plugstack.conf" "$etc/cgroup.conf" "$LC_STATE/hosts"
}
