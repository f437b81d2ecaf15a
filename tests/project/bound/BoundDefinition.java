import java.util.List;
import java.util.Map;

import org.apache.kafka.common.config.ConfigDef;

/**
 * Prints how the Kafka jars on the classpath define max.decompressed.message.bytes: the topic configuration
 * (LogConfig), the broker configuration (AbstractKafkaConfig.CONFIG_DEF, every broker setting) and the broker
 * settings ServerTopicConfigSynonyms names as the topic setting's synonyms. One "field=value" line each, so
 * tests/project/test_bound_definition.py can compare two releases line by line.
 */
public class BoundDefinition {
    private static final String NAME = "max.decompressed.message.bytes";

    private static void print(String where, ConfigDef def) {
        ConfigDef.ConfigKey key = def.configKeys().get(NAME);
        if (key == null) {
            System.out.println(where + ".defined=false");
            return;
        }
        System.out.println(where + ".name=" + key.name);
        System.out.println(where + ".type=" + key.type);
        System.out.println(where + ".default=" + key.defaultValue);
        System.out.println(where + ".validator=" + key.validator);
        System.out.println(where + ".importance=" + key.importance);
        System.out.println(where + ".internal=" + key.internalConfig);
        System.out.println(where + ".doc=" + key.documentation);
    }

    public static void main(String[] args) throws Exception {
        Class<?> logConfig = Class.forName("org.apache.kafka.storage.internals.log.LogConfig");
        print("topic", (ConfigDef) logConfig.getMethod("configDefCopy").invoke(null));
        Class<?> broker = Class.forName("org.apache.kafka.server.config.AbstractKafkaConfig");
        print("broker", (ConfigDef) broker.getField("CONFIG_DEF").get(null));
        Class<?> synonyms = Class.forName("org.apache.kafka.server.config.ServerTopicConfigSynonyms");
        Map<?, ?> all = (Map<?, ?>) synonyms.getField("ALL_TOPIC_CONFIG_SYNONYMS").get(null);
        Object list = all.get(NAME);
        StringBuilder names = new StringBuilder();
        if (list != null) {
            for (Object synonym : (List<?>) list) {
                names.append(names.length() == 0 ? "" : ",").append(synonym.getClass().getMethod("name").invoke(synonym));
            }
        }
        System.out.println("synonyms=" + names);
    }
}
