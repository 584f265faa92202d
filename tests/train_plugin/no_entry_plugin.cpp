// A loadable shared object that is not the trainer plugin (no batchai_trainer_main), for
// trainer_plugin_test's "plugin without the entry" case.
extern "C" __attribute__((visibility("default"))) int batchai_not_the_trainer() { return 0; }
