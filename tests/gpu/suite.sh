# Sourced by tests/gpu/devrun.sh and scripts/device/asan-run.sh: the
# test_gpu cases run as one suite (GCAP_GPU_TESTS), all but the doorbell
# stress, which both scripts run on its own with its batch counts.
GCAP_GPU_SUITE=test_truncation,test_corpus_host,test_corpus_copy,test_corpus_compiled
GCAP_GPU_SUITE=$GCAP_GPU_SUITE,test_copy_overflow,test_kernel_fault,test_quit_full_load,test_pools
GCAP_GPU_SUITE=$GCAP_GPU_SUITE,test_multi_gpu,test_copy_stress,test_copy_work_queues,test_copy_ring_full
GCAP_GPU_SUITE=$GCAP_GPU_SUITE,test_copy_many_queues,test_default_blocks
