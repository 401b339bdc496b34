# shellcheck shell=bash
# What is mounted and what runs in a chroot, read from /proc: sourced (not
# run) by tools/debian13.sh, which cleans both up on every exit, and by
# tools/test-chroot-cleanup.sh, which checks that nothing is left.

# Mount points at or below the directory $1, the last mounted first.
mounts_under() {
  awk -v root="$1" '{
    path = $2; gsub(/\\040/, " ", path)
    if (path == root || index(path, root "/") == 1) print path
  }' /proc/mounts | tac
}

# Ids of the processes whose root directory is $1, one a line.
pids_in_root() {
  find /proc -mindepth 2 -maxdepth 2 -name root -lname "$1" 2>/dev/null |
    cut -d/ -f3 || true   # find complains of processes that vanish
}
