"""Stand-ins and private test nodes shared by the provisioning tests, the doctor/provision work
and bench/provision_rerun: real makeself runfiles, real cuDNN tarballs, real mount namespaces."""
