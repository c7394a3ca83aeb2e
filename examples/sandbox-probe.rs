//! Prints what the tool box ([`fluxsim::sandbox`]) gets from this machine's kernel: whether
//! the tools fluxsim runs are confined to the scratch folder (Landlock) and kept off the
//! network (a network namespace, Landlock's TCP rules). `scripts/hostile-check` starts with
//! it.

fn main() {
    let iso = fluxsim::sandbox::isolation();
    println!("tool box on this machine: {iso}");
    if iso.landlock_abi < 1 {
        println!(
            "  reads of tools are not confined by the kernel here: the build closure's root \
             check and the post-renderer's API fields still keep them in the source"
        );
    }
    if !iso.network_namespace && iso.landlock_abi < 4 {
        println!(
            "  tools are not kept off the network by the kernel here: the build closure's \
             network check still refuses to run builds that fetch"
        );
    }
}
